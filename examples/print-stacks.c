/* print-stacks - resolve a recording with libpfsym and print each sample's
 * stack, leaf first: "pid/tid time_ns" then one "\tFUNCTION MODULE" line per
 * frame ("??" where no symbol is known). Build it with
 *   cc print-stacks.c $(pkg-config --cflags --libs libpfsym)
 * Usage: print-stacks RECORDING.pf */
#include <pfile/sym.h>
#include <stdio.h>
#include <string.h>

static const char *str(const struct pf_prof *p, uint32_t id, const char *none)
{
	return id == PF_PROF_NONE ? none : pf_prof_str_get(p, id, NULL);
}

static int on_sample(void *arg, const struct pf_prof *p, const struct pf_prof_sample *s)
{
	printf("%u/%u %llu\n", s->pid, s->tid, (unsigned long long)s->time);
	for (uint32_t id = s->stack; id != PF_PROF_NONE; id = pf_prof_stack_get(p, id)->parent) {
		const struct pf_prof_frame *f = pf_prof_frame_get(p, pf_prof_stack_get(p, id)->frame);
		printf("\t%s %s\n", str(p, f->name, "??"), str(p, f->dso, "[unknown]"));
	}
	return (void)arg, 0;
}

int main(int argc, char **argv)
{
	if (argc != 2) {
		fprintf(stderr, "usage: print-stacks RECORDING.pf\n");
		return 2;
	}
	pf_sym *s;
	char err[512] = "";
	struct pf_sym_opts o = PF_SYM_OPTS_INIT; /* this machine's files */
	int rc = pf_sym_new(&s, &o, err, sizeof(err));
	if (rc >= 0) {
		rc = pf_sym_each_sample(s, argv[1], on_sample, NULL, err, sizeof(err));
		pf_sym_free(s);
	}
	if (rc < 0)
		fprintf(stderr, "print-stacks: %s\n", err[0] ? err : strerror(-rc));
	return rc != 0;
}
