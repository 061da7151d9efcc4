/*
 * bpf_load - loads a two-instruction BPF socket filter (r0 = 0; exit) with
 * the bpf(2) system call, keeps it for argv[1] ms, and prints "PROG_ID TAG"
 * (the kernel's id and 8-byte tag, from BPF_OBJ_GET_INFO_BY_FD) so that a
 * test can match the PERF_RECORD_KSYMBOL / BPF_EVENT records of a recording
 * against it. Needs CAP_BPF (root) and a kernel with BPF (exit 77 if not).
 */
#include <linux/bpf.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

static long sys_bpf(int cmd, union bpf_attr *a)
{
	return syscall(SYS_bpf, cmd, a, sizeof(*a));
}

int main(int argc, char **argv)
{
	long ms = argc > 1 ? atol(argv[1]) : 100;
	struct bpf_insn prog[2];
	memset(prog, 0, sizeof(prog));
	prog[0].code = BPF_ALU64 | BPF_MOV | BPF_K; /* r0 = 0 */
	prog[0].dst_reg = BPF_REG_0;
	prog[1].code = BPF_JMP | BPF_EXIT;
	union bpf_attr a;
	memset(&a, 0, sizeof(a));
	a.prog_type = BPF_PROG_TYPE_SOCKET_FILTER;
	a.insns = (uint64_t)(uintptr_t)prog;
	a.insn_cnt = 2;
	a.license = (uint64_t)(uintptr_t)"GPL";
	memcpy(a.prog_name, "pftest_prog", 12);
	int fd = (int)sys_bpf(BPF_PROG_LOAD, &a);
	if (fd < 0) {
		perror("bpf(BPF_PROG_LOAD)");
		return 77;
	}
	struct bpf_prog_info info;
	memset(&info, 0, sizeof(info));
	memset(&a, 0, sizeof(a));
	a.info.bpf_fd = (uint32_t)fd;
	a.info.info_len = sizeof(info);
	a.info.info = (uint64_t)(uintptr_t)&info;
	if (sys_bpf(BPF_OBJ_GET_INFO_BY_FD, &a) < 0) {
		perror("bpf(BPF_OBJ_GET_INFO_BY_FD)");
		return 77;
	}
	printf("%u ", info.id);
	for (int i = 0; i < 8; i++)
		printf("%02x", info.tag[i]);
	printf("\n");
	fflush(stdout);
	struct timespec ts = { ms / 1000, (ms % 1000) * 1000000 };
	nanosleep(&ts, NULL);
	close(fd);
	return 0;
}
