/*
 * pfdump/profile.h - pfdump --profile (pfdump/profile.c), pfdump-private.
 */
#ifndef PFDUMP_PROFILE_H
#define PFDUMP_PROFILE_H

#include <pfile/pfile.h>

/* New, empty tables. @return 0 or -ENOMEM. */
int pfd_profile_init(void);
void pfd_profile_free(void);
/* Loads a STRINGS, FRAMES or STACKS section and prints the entries it adds,
 * or prints a SAMPLES section's entries; a malformed one is an error line. */
void pfd_profile_section(const struct pf_section *sec);

#endif
