/*
 * version.c - the release of libpfile: the Makefile's VERSION (passed as
 * PF_VERSION_STRING to this file alone), the one place it is written.
 */
#include "pfile.h"

const char *pf_version(void)
{
	return PF_VERSION_STRING;
}
