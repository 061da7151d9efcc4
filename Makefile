# pftools - one non-recursive Makefile.
#
#   make                     libpfile (static + shared) and every tool under build/bin
#   make check               build, then run the whole test suite (tests/run)
#   make check SANITIZE=1    the same with ASan+UBSan, in build-san/
#   make TSAN=1              ThreadSanitizer build in build-tsan/ (tests/proctree.bats uses it)
#   make check SANITIZE=1 CC=clang   with clang's sanitizers, in build-san-clang/
#   make demo                record, symbolize and fold the bundled workload
#   make bench               run the benchmark scripts in bench/
#   make fuzz FUZZ_SECONDS=60   the libFuzzer targets of tests/fuzz/, each for 60 s (clang)
#   make install PREFIX=/usr/local DESTDIR=    (make uninstall with the same removes it)
#   make CROSS_COMPILE=aarch64-linux-gnu- STATIC=1 pfrec     cross build for a board
#
# Dependencies come from Debian packages and are found with pkg-config;
# scripts/install-deps installs what is missing (as root) or prints the apt-get line.

VERSION     := 0.1.0
CROSS_COMPILE ?=
# CC and AR: `make CC=clang` (or CC in the environment) picks another
# compiler; otherwise, and for a cross build unless CC is on the command line,
# $(CROSS_COMPILE)gcc and $(CROSS_COMPILE)ar.
ifneq ($(filter default undefined,$(origin CC)),)
CC          := $(CROSS_COMPILE)gcc
else ifneq ($(CROSS_COMPILE),)
ifneq ($(origin CC),command line)
CC          := $(CROSS_COMPILE)gcc
endif
endif
ifneq ($(filter default undefined,$(origin AR)),)
AR          := $(CROSS_COMPILE)ar
else ifneq ($(CROSS_COMPILE),)
ifneq ($(origin AR),command line)
AR          := $(CROSS_COMPILE)ar
endif
endif
# Another compiler than gcc builds into its own directory (build-clang,
# build-san-clang): objects of two compilers never mix.
CC_NAME     := $(notdir $(firstword $(CC)))
CC_SUFFIX   := $(if $(filter gcc cc %-gcc,$(CC_NAME)),,-$(CC_NAME))
PKG_CONFIG  ?= pkg-config
# Cross builds: Debian ships no cross pkg-config wrapper; read the multiarch .pc
# files of the target (e.g. libzstd-dev:arm64 for CROSS_COMPILE=aarch64-linux-gnu-).
ifneq ($(CROSS_COMPILE),)
PKG_CONFIG_LIBDIR ?= /usr/lib/$(patsubst %-,%,$(notdir $(CROSS_COMPILE)))/pkgconfig
override PKG_CONFIG := PKG_CONFIG_LIBDIR=$(PKG_CONFIG_LIBDIR) $(PKG_CONFIG)
# Keep target objects out of the host build/ (e.g. build-aarch64/).
O ?= build-$(firstword $(subst -, ,$(notdir $(CROSS_COMPILE))))
endif
PREFIX      ?= /usr/local
DESTDIR     ?=
BINDIR      ?= $(PREFIX)/bin
LIBDIR      ?= $(PREFIX)/lib
INCLUDEDIR  ?= $(PREFIX)/include
MANDIR      ?= $(PREFIX)/share/man
BASHCOMPDIR ?= $(PREFIX)/share/bash-completion/completions
ZSHCOMPDIR  ?= $(PREFIX)/share/zsh/vendor-completions

ifeq ($(SANITIZE),1)
O           ?= build-san$(CC_SUFFIX)
SANFLAGS    := -fsanitize=address,undefined -fno-omit-frame-pointer -fno-sanitize-recover=undefined
else ifeq ($(TSAN),1)
O           ?= build-tsan$(CC_SUFFIX)
SANFLAGS    := -fsanitize=thread -fno-omit-frame-pointer
else
O           ?= build$(CC_SUFFIX)
SANFLAGS    :=
endif

ifeq ($(STATIC),1)
PCSTATIC    := --static
LDSTATIC    := -static
endif

OPT         ?= -O2
WARN        := -Wall -Wextra -Werror
CFLAGS      ?= $(OPT) -g
# Headers: the installed ones under include/pfile/ (libraries include them by
# name, tools as <pfile/NAME.h>), libpfile's and libpfsym's private ones
# (internal/*.h), the private ones both libraries share (common/internal/),
# the tools' shared code.
INC_FLAGS   := -Iinclude -Iinclude/pfile -Ilibpfile -Ilibpfsym -Icommon -Itools -Itools/common
ALL_CFLAGS  := -std=c11 $(WARN) -D_GNU_SOURCE $(INC_FLAGS) $(CFLAGS) $(SANFLAGS) -fPIC
# the release, for libpfile/version.c alone (pf_version())
VERSION_FLAG = $(if $(filter libpfile/version.c,$<),-DPF_VERSION_STRING=\"$(VERSION)\")
ALL_LDFLAGS := $(LDFLAGS) $(SANFLAGS) $(LDSTATIC)

PC_CORE     := libzstd libxxhash
PC_SYM      := libdw libelf
CORE_CFLAGS := $(shell $(PKG_CONFIG) --cflags $(PC_CORE) 2>/dev/null)
CORE_LIBS   := $(shell $(PKG_CONFIG) $(PCSTATIC) --libs $(PC_CORE) 2>/dev/null)
SYM_CFLAGS  := $(shell $(PKG_CONFIG) --cflags $(PC_SYM) 2>/dev/null)
# libpfsym loads libdw when a recording has stack copies (dlopen, see
# libpfsym/unwind.c) and links libelf only; a static build links both.
ifeq ($(STATIC),1)
SYM_LIBS    := $(shell $(PKG_CONFIG) $(PCSTATIC) --libs $(PC_SYM) 2>/dev/null)
else
SYM_LIBS    := $(shell $(PKG_CONFIG) --libs libelf 2>/dev/null)
SYM_CFLAGS  += -DPF_DW_DLOPEN
endif
ALL_CFLAGS  += $(CORE_CFLAGS)

# Tools: tools/NAME.c plus tools/NAME/*.c, with tools/common/ (not installed).
TOOLS       := pfdump pfrec pfsym pffold pfdiff pfflame pfimport pfscript pfpprof
TOOLS_PRESENT := $(foreach t,$(TOOLS),$(if $(wildcard tools/$(t).c),$(t)))
SYM_TOOLS   := pfsym
EXTRA_LIBS_pfdiff := -lm
EXTRA_LIBS_pfflame := -lm
EXTRA_LIBS_pfsym := -liberty -lz
# the libraries a tool links before libpftools-common.a and libpfile.a
EXTRA_A_pfsym = $(SYMLIB_A)
# pfpprof: protobuf-c encodes the messages that protoc-c generates from
# tools/pfpprof/profile.proto into $(O)/gen/; zlib writes the gzip stream.
PC_PPROF    := libprotobuf-c zlib
EXTRA_LIBS_pfpprof := $(shell $(PKG_CONFIG) $(PCSTATIC) --libs $(PC_PPROF) 2>/dev/null)

# libpfile: the format (libzstd, libxxhash). Its symbols are the pf_ ones
# (libpfile/libpfile.map); internal functions that cross its files are
# named pfi_.
LIB_SRC     := $(wildcard libpfile/*.c libpfile/*/*.c)
LIB_OBJ     := $(LIB_SRC:%.c=$(O)/obj/%.o)
LIB_A       := $(O)/lib/libpfile.a
LIB_SO      := $(O)/lib/libpfile.so
# libpfsym: the symbolizer, the unwinder and the rewrite of a recording into
# a resolved one (libelf, libiberty's demangler; libdw loaded at run time).
# Its symbols are the pf_sym_ ones (libpfsym/libpfsym.map); internal
# functions that cross its files are named pfsi_. It carries its own copy of
# the build-id reader of tools/common/buildid.c and of the text escaper of
# tools/common/text.c, which its summary lines go through (not installed).
SYMLIB_SRC  := $(wildcard libpfsym/*.c)
SYMLIB_OBJ  := $(SYMLIB_SRC:%.c=$(O)/obj/%.o) $(O)/obj/tools/common/buildid.o $(O)/obj/tools/common/proof.o $(O)/obj/tools/common/text.o
SYMLIB_A    := $(O)/lib/libpfsym.a
SYMLIB_SO   := $(O)/lib/libpfsym.so
SYMLIB_LIBS := $(SYM_LIBS) $(CORE_LIBS) -liberty -lz
COMMON_SRC  := $(wildcard tools/common/*.c)
COMMON_A    := $(O)/lib/libpftools-common.a
HDRS        := $(wildcard include/pfile/*.h libpfile/internal/*.h libpfsym/internal/*.h common/internal/*.h tools/*.h tools/*/*.h)
BINS        := $(TOOLS_PRESENT:%=$(O)/bin/%)
TEST_SRC    := $(wildcard tests/c/*.c)
TEST_BINS   := $(TEST_SRC:tests/c/%.c=$(O)/tests/%) $(O)/tests/ksyms-check-scan1 $(O)/tests/ksyms-check-scan8

.PHONY: all lib tools check test test-bins demo bench install uninstall clean deps $(TOOLS)
all: lib tools
lib: $(LIB_A) $(LIB_SO) $(SYMLIB_A) $(SYMLIB_SO)
tools: $(BINS)
$(TOOLS): %: $(O)/bin/%

$(O)/obj/%.o: %.c $(HDRS) Makefile
	@mkdir -p $(dir $@)
	$(CC) $(ALL_CFLAGS) $(VERSION_FLAG) $(if $(filter tools/pfsym% libpfsym/%,$<),$(SYM_CFLAGS)) -c -o $@ $<

$(LIB_A): $(LIB_OBJ)
	@mkdir -p $(dir $@)
	rm -f $@ && $(AR) rcs $@ $^

$(LIB_SO): $(LIB_OBJ) libpfile/libpfile.map
	@mkdir -p $(dir $@)
	$(CC) -shared -Wl,-soname,libpfile.so.0 -Wl,--version-script,libpfile/libpfile.map -o $@ $(LIB_OBJ) \
	    $(filter-out -static,$(ALL_LDFLAGS)) $(CORE_LIBS)

$(SYMLIB_A): $(SYMLIB_OBJ)
	@mkdir -p $(dir $@)
	rm -f $@ && $(AR) rcs $@ $^

$(SYMLIB_SO): $(SYMLIB_OBJ) $(LIB_SO) libpfsym/libpfsym.map
	@mkdir -p $(dir $@)
	$(CC) -shared -Wl,-soname,libpfsym.so.0 -Wl,--version-script,libpfsym/libpfsym.map -o $@ $(SYMLIB_OBJ) \
	    $(filter-out -static,$(ALL_LDFLAGS)) -L$(O)/lib -lpfile $(SYMLIB_LIBS)

$(COMMON_A): $(COMMON_SRC:%.c=$(O)/obj/%.o)
	@mkdir -p $(dir $@)
	rm -f $@ && $(AR) rcs $@ $^

define tool_rule
$(O)/bin/$(1): $(patsubst %.c,$(O)/obj/%.o,tools/$(1).c $(wildcard tools/$(1)/*.c)) $(EXTRA_A_$(1)) $(COMMON_A) $(LIB_A)
	@mkdir -p $$(dir $$@)
	$$(CC) -o $$@ $$^ $$(ALL_LDFLAGS) $(if $(filter $(1),$(SYM_TOOLS)),$$(SYM_LIBS)) $$(CORE_LIBS) $$(EXTRA_LIBS_$(1))
endef
$(foreach t,$(TOOLS_PRESENT),$(eval $(call tool_rule,$(t))))

# Test programs: tests/c/NAME.c with the shared helpers of tests/c/common/;
# pftest-writer's modes are in tests/c/pftest-writer/.
TEST_HDRS   := $(wildcard tests/c/common/*.h tests/c/pftest-writer/*.h)
TEST_UTIL_OBJ := $(patsubst %.c,$(O)/obj/%.o,$(wildcard tests/c/common/*.c))
TEST_PFW_OBJ := $(patsubst %.c,$(O)/obj/%.o,$(wildcard tests/c/pftest-writer/*.c))
$(TEST_UTIL_OBJ) $(TEST_PFW_OBJ): $(TEST_HDRS)
$(TEST_UTIL_OBJ) $(TEST_PFW_OBJ): ALL_CFLAGS += -Itests/c/common
$(O)/tests/pftest-writer: $(TEST_PFW_OBJ)

$(O)/tests/%: tests/c/%.c $(TEST_UTIL_OBJ) $(TEST_HDRS) $(COMMON_A) $(LIB_A)
	@mkdir -p $(dir $@)
	$(CC) $(ALL_CFLAGS) -Itests/c/common -o $@ $< $(filter %.o,$^) $(COMMON_A) $(LIB_A) $(ALL_LDFLAGS) $(CORE_LIBS)

# ksyms-check with the KSYMS name scan of other machines (libpfile/ksyms.c:
# one byte or one word at a time instead of SSE2), linked before libpfile.
$(O)/tests/ksyms-check-scan%: tests/c/ksyms-check.c libpfile/ksyms.c $(TEST_UTIL_OBJ) $(COMMON_A) $(LIB_A)
	@mkdir -p $(dir $@)
	$(CC) $(ALL_CFLAGS) -Itests/c/common -DPF_KSYMS_SCAN=$* -o $@ tests/c/ksyms-check.c libpfile/ksyms.c $(TEST_UTIL_OBJ) $(COMMON_A) $(LIB_A) $(ALL_LDFLAGS) $(CORE_LIBS)

# pfpprof's generated encoder. A missing protobuf-c or zlib stops the build
# with the package to install (scripts/install-deps installs both).
PPROF_GEN   := $(O)/gen/profile.pb-c.c $(O)/gen/profile.pb-c.h
.PHONY: pprof-deps
pprof-deps:
	@command -v protoc-c >/dev/null 2>&1 || { echo "pftools: protoc-c not found: install Debian's protobuf-c-compiler (scripts/install-deps)" >&2; exit 1; }
	@$(PKG_CONFIG) --exists libprotobuf-c || { echo "pftools: protobuf-c/protobuf-c.h (libprotobuf-c.pc) not found: install Debian's libprotobuf-c-dev (scripts/install-deps)" >&2; exit 1; }
	@$(PKG_CONFIG) --exists zlib || { echo "pftools: zlib.h (zlib.pc) not found: install Debian's zlib1g-dev (scripts/install-deps)" >&2; exit 1; }

$(PPROF_GEN) &: tools/pfpprof/profile.proto | pprof-deps
	@mkdir -p $(O)/gen
	protoc-c --proto_path=tools/pfpprof --c_out=$(O)/gen tools/pfpprof/profile.proto

$(O)/obj/gen/profile.pb-c.o: $(O)/gen/profile.pb-c.c $(O)/gen/profile.pb-c.h | pprof-deps
	@mkdir -p $(dir $@)
	$(CC) $(ALL_CFLAGS) $(shell $(PKG_CONFIG) --cflags $(PC_PPROF) 2>/dev/null) -I$(O)/gen -c -o $@ $<

$(patsubst %.c,$(O)/obj/%.o,tools/pfpprof.c $(wildcard tools/pfpprof/*.c)): $(O)/gen/profile.pb-c.h | pprof-deps
$(patsubst %.c,$(O)/obj/%.o,tools/pfpprof.c $(wildcard tools/pfpprof/*.c)): ALL_CFLAGS += -I$(O)/gen $(shell $(PKG_CONFIG) --cflags $(PC_PPROF) 2>/dev/null)
$(O)/bin/pfpprof: $(O)/obj/gen/profile.pb-c.o

PMU_SRC := tools/pfrec/pmu_model.c tools/pfrec/pmu_parse.c tools/pfrec/pmu_list.c
# pfrec's event parser on its own (tests/pmu.bats)
$(O)/tests/pmu-test: tests/c/pmu-test.c $(PMU_SRC) tools/pfrec/pmu.h tools/pfrec/pmu_internal.h Makefile
	@mkdir -p $(dir $@)
	$(CC) $(ALL_CFLAGS) -o $@ tests/c/pmu-test.c $(PMU_SRC) $(ALL_LDFLAGS)

deps:
	@scripts/install-deps

# Fuzzing (tests/fuzz/, README "Fuzzing"): libFuzzer targets built with
# clang's -fsanitize=fuzzer,address,undefined in build-fuzz/ (clang and
# libclang-rt-14-dev: scripts/install-deps --fuzz). `make fuzz` makes the
# seed corpus (tests/fuzz/make-corpus.sh, with the tools of build/), replays
# tests/fuzz/regress/ and runs each target for FUZZ_SECONDS; a finding fails.
FUZZ_CC     ?= clang
FUZZ_O      := build-fuzz
FUZZ_SECONDS ?= 60
FUZZ_TARGETS := $(patsubst tests/fuzz/fuzz_%.c,%,$(wildcard tests/fuzz/fuzz_*.c))
FUZZ_SAN    := -fsanitize=address,undefined -fno-sanitize-recover=undefined
FUZZ_CFLAGS := -std=c11 $(WARN) -D_GNU_SOURCE $(INC_FLAGS) \
               -g -O1 -fno-omit-frame-pointer $(FUZZ_SAN) $(CORE_CFLAGS)
FUZZ_LIB_OBJ := $(LIB_SRC:%.c=$(FUZZ_O)/obj/%.o) $(COMMON_SRC:%.c=$(FUZZ_O)/obj/%.o)
FUZZ_BINS   := $(FUZZ_TARGETS:%=$(FUZZ_O)/fuzz_%)

$(FUZZ_O)/obj/%.o: %.c $(HDRS) Makefile
	@mkdir -p $(dir $@)
	$(FUZZ_CC) $(FUZZ_CFLAGS) $(VERSION_FLAG) $(if $(filter libpfsym/%,$<),$(SYM_CFLAGS)) \
	    -fsanitize=fuzzer-no-link -c -o $@ $<

$(FUZZ_O)/fuzz_%: tests/fuzz/fuzz_%.c tests/fuzz/fuzz.h $(FUZZ_LIB_OBJ) $(FUZZ_O)/obj/tests/c/common/testutil.o
	$(FUZZ_CC) $(FUZZ_CFLAGS) -Itests/c/common -fsanitize=fuzzer -o $@ $< $(FUZZ_LIB_OBJ) \
	    $(FUZZ_O)/obj/tests/c/common/testutil.o $(CORE_LIBS) -lm

# the event-spec parser of pfrec, against the fake sysfs trees of tests/fixtures/
$(FUZZ_O)/fuzz_evspec: tests/fuzz/fuzz_evspec.c tests/fuzz/fuzz.h $(PMU_SRC) tools/pfrec/pmu.h tools/pfrec/pmu_internal.h
	@mkdir -p $(dir $@)
	$(FUZZ_CC) $(FUZZ_CFLAGS) -fsanitize=fuzzer -o $@ tests/fuzz/fuzz_evspec.c $(PMU_SRC)

# pfimport's perf.data reader and its conversion to .pf
PERFDATA_SRC := $(wildcard tools/pfimport/*.c)
$(FUZZ_O)/fuzz_perfdata: tests/fuzz/fuzz_perfdata.c tests/fuzz/fuzz.h tools/perfdata.h $(PERFDATA_SRC) $(FUZZ_LIB_OBJ)
	@mkdir -p $(dir $@)
	$(FUZZ_CC) $(FUZZ_CFLAGS) -fsanitize=fuzzer -o $@ tests/fuzz/fuzz_perfdata.c $(PERFDATA_SRC) \
	    $(FUZZ_LIB_OBJ) $(CORE_LIBS)

# pfsym's line index files (libpfsym/lnidx.c), with libpfsym around it
FUZZ_SYM_COMMON := $(FUZZ_O)/obj/tools/common/buildid.o $(FUZZ_O)/obj/tools/common/proof.o $(FUZZ_O)/obj/tools/common/text.o
FUZZ_SYM_OBJ := $(SYMLIB_SRC:%.c=$(FUZZ_O)/obj/%.o) $(FUZZ_SYM_COMMON)
# the tools' common objects that libpfsym's targets do not link twice
FUZZ_LIB_NOSYM = $(filter-out $(FUZZ_SYM_COMMON),$(FUZZ_LIB_OBJ))
$(FUZZ_O)/fuzz_lnidx: tests/fuzz/fuzz_lnidx.c tests/fuzz/fuzz.h $(FUZZ_SYM_OBJ) $(FUZZ_LIB_OBJ)
	@mkdir -p $(dir $@)
	$(FUZZ_CC) $(FUZZ_CFLAGS) $(SYM_CFLAGS) -fsanitize=fuzzer -o $@ $< $(FUZZ_SYM_OBJ) \
	    $(FUZZ_LIB_NOSYM) $(SYMLIB_LIBS) -lm -ldl -lpthread

# pfsym's reader of compressed DWARF sections (libpfsym/dwsec.c)
$(FUZZ_O)/fuzz_dwsec: tests/fuzz/fuzz_dwsec.c tests/fuzz/fuzz.h $(FUZZ_SYM_OBJ) $(FUZZ_LIB_OBJ)
	@mkdir -p $(dir $@)
	$(FUZZ_CC) $(FUZZ_CFLAGS) $(SYM_CFLAGS) -fsanitize=fuzzer -o $@ $< $(FUZZ_SYM_OBJ) \
	    $(FUZZ_LIB_NOSYM) $(SYMLIB_LIBS) -lz -lm -ldl -lpthread

# pfsym's JIT maps (libpfsym/perfmap.c: PERFMAP text and its index)
$(FUZZ_O)/fuzz_perfmap: tests/fuzz/fuzz_perfmap.c tests/fuzz/fuzz.h $(FUZZ_SYM_OBJ) $(FUZZ_LIB_OBJ)
	@mkdir -p $(dir $@)
	$(FUZZ_CC) $(FUZZ_CFLAGS) $(SYM_CFLAGS) -fsanitize=fuzzer -o $@ $< $(FUZZ_SYM_OBJ) \
	    $(FUZZ_LIB_NOSYM) $(SYMLIB_LIBS) -lm -ldl -lpthread

# pfsym's use of a debuginfod server's answer (libpfsym/debuginfod.c, find.c)
$(FUZZ_O)/fuzz_dbgd: tests/fuzz/fuzz_dbgd.c tests/fuzz/fuzz.h $(FUZZ_SYM_OBJ) $(FUZZ_LIB_OBJ)
	@mkdir -p $(dir $@)
	$(FUZZ_CC) $(FUZZ_CFLAGS) $(SYM_CFLAGS) -fsanitize=fuzzer -o $@ $< $(FUZZ_SYM_OBJ) \
	    $(FUZZ_LIB_NOSYM) $(SYMLIB_LIBS) -lm -ldl -lpthread

# pfdump's EVENT descriptions and tracepoint format files
$(FUZZ_O)/fuzz_tpformat: tests/fuzz/fuzz_tpformat.c tests/fuzz/fuzz.h tools/pfdump/tracepoint.c tools/pfdump/tracepoint.h
	@mkdir -p $(dir $@)
	$(FUZZ_CC) $(FUZZ_CFLAGS) -fsanitize=fuzzer -o $@ tests/fuzz/fuzz_tpformat.c tools/pfdump/tracepoint.c

.PHONY: fuzz fuzz-build fuzz-corpus
fuzz-build: $(FUZZ_BINS)

fuzz-corpus: all test-bins
	@PFTOOLS_BUILD=$(abspath build) tests/fuzz/make-corpus.sh $(FUZZ_O)/seeds

fuzz:
	@$(MAKE) --no-print-directory fuzz-build
	@$(MAKE) --no-print-directory O=build SANITIZE= fuzz-corpus
	@tests/fuzz/run.sh $(FUZZ_O) $(FUZZ_SECONDS) $(FUZZ_TARGETS)

# check and demo install dependencies first, then build in a sub-make so that
# the pkg-config flags are read after the packages exist.
check:
	@scripts/install-deps
	@$(MAKE) --no-print-directory all test-bins
	@PFTOOLS_BUILD=$(abspath $(O)) SANITIZE=$(SANITIZE) tests/run

test-bins: $(TEST_BINS)

test: check

demo:
	@scripts/install-deps
	@$(MAKE) --no-print-directory all
	@PFTOOLS_BUILD=$(abspath $(O)) demo/run

bench: all
	@for b in bench/*.sh; do echo "== $$b"; PFTOOLS_BUILD=$(abspath $(O)) $$b || exit 1; done

# The headers go to $(INCLUDEDIR)/pfile/; $(INCLUDEDIR)/pfile.h includes
# pfile/pfile.h for programs written before the headers had a folder.
install: all
	install -d $(DESTDIR)$(BINDIR) $(DESTDIR)$(LIBDIR)/pkgconfig $(DESTDIR)$(INCLUDEDIR)/pfile \
	    $(DESTDIR)$(MANDIR)/man1 $(DESTDIR)$(MANDIR)/man5 $(DESTDIR)$(BASHCOMPDIR) $(DESTDIR)$(ZSHCOMPDIR)
	install -m 755 $(BINS) $(DESTDIR)$(BINDIR)/
	install -m 644 $(LIB_A) $(DESTDIR)$(LIBDIR)/
	install -m 755 $(LIB_SO) $(DESTDIR)$(LIBDIR)/libpfile.so.0
	ln -sf libpfile.so.0 $(DESTDIR)$(LIBDIR)/libpfile.so
	install -m 644 $(wildcard include/pfile/*.h) $(DESTDIR)$(INCLUDEDIR)/pfile/
	printf '/* compatibility: the headers are in pfile/ */\n#include <pfile/pfile.h>\n' \
	    > $(DESTDIR)$(INCLUDEDIR)/pfile.h
	sed -e 's|@PREFIX@|$(PREFIX)|' -e 's|@LIBDIR@|$(LIBDIR)|' -e 's|@INCLUDEDIR@|$(INCLUDEDIR)|' \
	    -e 's|@VERSION@|$(VERSION)|' libpfile/libpfile.pc.in > $(DESTDIR)$(LIBDIR)/pkgconfig/libpfile.pc
	install -m 644 $(SYMLIB_A) $(DESTDIR)$(LIBDIR)/
	install -m 755 $(SYMLIB_SO) $(DESTDIR)$(LIBDIR)/libpfsym.so.0
	ln -sf libpfsym.so.0 $(DESTDIR)$(LIBDIR)/libpfsym.so
	sed -e 's|@PREFIX@|$(PREFIX)|' -e 's|@LIBDIR@|$(LIBDIR)|' -e 's|@INCLUDEDIR@|$(INCLUDEDIR)|' \
	    -e 's|@VERSION@|$(VERSION)|' libpfsym/libpfsym.pc.in > $(DESTDIR)$(LIBDIR)/pkgconfig/libpfsym.pc
	install -m 644 $(TOOLS_PRESENT:%=tools/%.1) $(DESTDIR)$(MANDIR)/man1/
	install -m 644 $(TOOLS_PRESENT:%=completions/bash/%) $(DESTDIR)$(BASHCOMPDIR)/
	install -m 644 $(TOOLS_PRESENT:%=completions/zsh/_%) $(DESTDIR)$(ZSHCOMPDIR)/

# removes what install put in place (the same PREFIX and DESTDIR)
uninstall:
	rm -f $(TOOLS_PRESENT:%=$(DESTDIR)$(BINDIR)/%) $(TOOLS_PRESENT:%=$(DESTDIR)$(MANDIR)/man1/%.1) \
	    $(TOOLS_PRESENT:%=$(DESTDIR)$(BASHCOMPDIR)/%) $(TOOLS_PRESENT:%=$(DESTDIR)$(ZSHCOMPDIR)/_%)
	rm -f $(addprefix $(DESTDIR)$(LIBDIR)/,libpfile.a libpfile.so libpfile.so.0 libpfsym.a libpfsym.so libpfsym.so.0 \
	    pkgconfig/libpfile.pc pkgconfig/libpfsym.pc)
	rm -f $(patsubst include/pfile/%,$(DESTDIR)$(INCLUDEDIR)/pfile/%,$(wildcard include/pfile/*.h)) \
	    $(DESTDIR)$(INCLUDEDIR)/pfile.h
	-rmdir $(DESTDIR)$(INCLUDEDIR)/pfile 2>/dev/null

clean:
	rm -rf build build-san build-tsan build-clang build-san-clang build-fuzz
