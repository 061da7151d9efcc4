/*
 * tools/common/proof.h - proving that a file on this machine is the one a
 * recording mapped, without a recorded build-id (not installed; compiled
 * into libpfsym and pfimport, like buildid.c).
 *
 * The proof has two parts. The boot: this machine is the recording's (same
 * hostname and kernel release as META says) and has not rebooted since (the
 * running kernel's `_text`, from /proc/kallsyms, equals META kernel_text:
 * KASLR moves it at each boot). The file: its device and inode are those the
 * mapping recorded (MMAP2 maj/min/ino, a MAPS line's DEV and INODE), and its
 * change time (st_ctime, which every write, truncate, chmod or rename of the
 * inode moves and no user call sets back) precedes the recording's start:
 * the inode has not changed since it was mapped. A file replaced since has
 * another inode; one rewritten in place, or a recycled inode, a later ctime.
 */
#ifndef PF_TOOLS_PROOF_H
#define PF_TOOLS_PROOF_H

#include <stddef.h>
#include <stdint.h>

/* The running kernel's `_text` from /proc/kallsyms (its first lines).
 * @return 1 with *text set, 0 when not shown (hidden addresses, no file). */
int pf_proof_running_text(uint64_t *text);

/* The addresses of the core kernel symbols names[0..n) in /proc/kallsyms
 * (read up to the first module symbol). @return how many were found
 * (addrs[i] 0 for one not found). */
int pf_proof_running_syms(const char *const *names, uint64_t *addrs, int n);

/* The GNU build-id note (type 3, name "GNU") among the ELF notes of a file
 * of the kernel's (/sys/kernel/notes, /sys/module/NAME/notes/...), native
 * byte order. @return its size (1..64, copied to bid), or 0 when none. */
size_t pf_proof_note_build_id(const char *path, uint8_t bid[64]);

/* Whether this machine and boot recorded the file whose META gave
 * `hostname`, `release` (NULL: absent) and kernel `_text` (0: absent).
 * @return 1 yes; 0 no, with `why` (why_size bytes) saying which part
 * differs or is missing ("recorded on host 'a', this is 'b'"). */
int pf_proof_same_boot(const char *hostname, const char *release, uint64_t text, char *why, size_t why_size);

/* Whether the file open at `fd` is the one mapped: device maj:min, inode
 * `ino`, unchanged (st_ctime) before `start_ns` (the recording's start, ns
 * since the Unix epoch; 0: unknown). @return 1 yes; 0 no, with `why` saying
 * what differs ("inode 12 recorded, 34 now: replaced since"). */
int pf_proof_file(int fd, uint32_t maj, uint32_t min, uint64_t ino, uint64_t start_ns, char *why, size_t why_size);

#endif
