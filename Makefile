# apiparity - see README.md. `make check` builds and runs every test;
# `make check SANITIZE=1` does the same with ASan+UBSan in build-san/;
# `make coverage` with --coverage in build-cov/, then reports what ran;
# `make coverage SANITIZE=1` both at once, in build-cov-san/ (CI's one pass).

CC      ?= cc
# PNG=0 builds without the PNG pictures (no librsvg, cairo or libpng): a
# server that only checks and verifies never draws one.
PNG     ?= 1
NOPNG   := $(filter 0,$(PNG))
PKGS    := jansson libcrypto yaml-0.1 $(if $(NOPNG),,libpng)
# Headers only: review/png.c loads librsvg (and cairo with it) when it draws.
DL_PKGS := $(if $(NOPNG),,librsvg-2.0 cairo fontconfig)
SANITIZE ?=
COVERAGE ?=
BUILD   := build$(if $(COVERAGE),-cov)$(if $(SANITIZE),-san)$(if $(NOPNG),-nopng)
SAN     := -fsanitize=address,undefined -fno-omit-frame-pointer -fno-sanitize-recover=all
# Coverage unoptimised, so that a line's count is that line's.
SANFLAGS := $(if $(SANITIZE),$(SAN))$(if $(COVERAGE), --coverage)
CFLAGS  ?= $(if $(COVERAGE),-O0,-O2) -g
CFLAGS  += -std=c17 -D_GNU_SOURCE -Wall -Wextra -Werror -pthread $(SANFLAGS) -DAP_PNG=$(if $(NOPNG),0,1) \
           $(shell pkg-config --cflags $(PKGS) $(DL_PKGS)) -Isrc -I$(BUILD)
LDLIBS  += $(shell pkg-config --libs $(PKGS)) -lm -pthread
LDFLAGS += $(SANFLAGS)
VERSION := 0.1.0
COMMIT  := $(shell git rev-parse --short=12 HEAD 2>/dev/null || echo unknown)

# The layers, lowest first; a layer includes only those before it
# (tests/check-layers enforces it).
LAYERS  := base env evidence check review
LIB_SRC := $(foreach l,$(LAYERS),$(wildcard src/$(l)/*.c))
CMD_SRC := src/main.c src/cli.c $(wildcard src/cmd/*.c)
HDRS    := $(wildcard src/*.h src/*/*.h)
GEN_SRC := $(BUILD)/gen-worker.c $(BUILD)/gen-envs.c $(BUILD)/gen-specs.c $(BUILD)/gen-policy.c \
           $(BUILD)/gen-tolerances.c $(BUILD)/gen-limits.c $(BUILD)/gen-plugins.c \
           $(BUILD)/gen-version.c \
           $(BUILD)/gen-catalog.c $(BUILD)/gen-trace.c
LIB_OBJ := $(patsubst src/%.c,$(BUILD)/%.o,$(LIB_SRC)) $(GEN_SRC:.c=.o)
CMD_OBJ := $(patsubst src/%.c,$(BUILD)/%.o,$(CMD_SRC))
UNIT    := $(patsubst tests/unit/%.c,$(BUILD)/tests/%,$(wildcard tests/unit/test-*.c))
# Programs the integration tests use (tests/tools/), built next to the unit tests.
TOOLS   := $(patsubst tests/tools/%.c,$(BUILD)/tests/%,$(wildcard tests/tools/*.c))

all: $(BUILD)/apiparity

$(BUILD)/apiparity: $(CMD_OBJ) $(BUILD)/libap.a
	$(CC) $(LDFLAGS) -o $@ $^ $(LDLIBS)

$(BUILD)/libap.a: $(LIB_OBJ)
	ar rcs $@ $^

$(BUILD)/%.o: src/%.c $(HDRS) | $(BUILD)
	@mkdir -p $(dir $@)
	$(CC) $(CPPFLAGS) $(CFLAGS) -c -o $@ $<

$(BUILD)/gen-%.o: $(BUILD)/gen-%.c
	$(CC) $(CPPFLAGS) $(CFLAGS) -c -o $@ $<

$(BUILD)/embed: tools/embed.c | $(BUILD)
	$(CC) -O2 -o $@ $<

# The worker is one program, sent on stdin to each target interpreter: its
# modules, joined in this order into $(BUILD)/apiparity_worker.py, two blank
# lines between one module and the next, and that file is what the binary
# embeds. They share one namespace; a module uses at import time only what
# comes before it (protocol.py holds the imports, main.py the OPS table, the
# loop and the program's entry). `make worker-modules` prints the list (the
# tests read it there).
WORKER_PY := $(addprefix worker/,protocol.py fingerprint.py resolve.py probe.py \
             testindex.py testpreflight.py testrun.py testgen.py sweep.py \
             numeric_tags.py numeric_samples.py numeric_adapter.py numeric_run.py cases.py \
             main.py)

$(BUILD)/apiparity_worker.py: $(WORKER_PY) | $(BUILD)
	awk 'FNR == 1 && NR > 1 { print "\n" } { print }' $(WORKER_PY) > $@.tmp
	mv $@.tmp $@

$(BUILD)/gen-worker.c: $(BUILD)/apiparity_worker.py $(BUILD)/embed
	$(BUILD)/embed ap_worker_py < $< > $@

worker-modules:
	@echo $(WORKER_PY)

$(BUILD)/gen-envs.c: envs/reference.ini $(BUILD)/embed
	$(BUILD)/embed ap_reference_envs < $< > $@

$(BUILD)/gen-catalog.c: specs/catalog.txt $(BUILD)/embed
	$(BUILD)/embed ap_builtin_catalog < $< > $@

$(BUILD)/gen-policy.c: policies/default.yaml $(BUILD)/embed
	$(BUILD)/embed ap_default_policy < $< > $@

$(BUILD)/gen-tolerances.c: specs/tolerances.ini $(BUILD)/embed
	$(BUILD)/embed ap_default_tolerances < $< > $@

$(BUILD)/gen-limits.c: specs/backend-limits.ini $(BUILD)/embed
	$(BUILD)/embed ap_default_limits < $< > $@

$(BUILD)/gen-plugins.c: specs/plugin-apis.ini $(BUILD)/embed
	$(BUILD)/embed ap_default_plugins < $< > $@

$(BUILD)/gen-specs.c: $(wildcard specs/*.yaml) $(BUILD)/embed
	$(BUILD)/embed -t ap_builtin_specs $(sort $(wildcard specs/*.yaml)) > $@

# The tracer runs in the traced program's Python, not in the worker.
TRACE_PY := worker/trace/run.py worker/trace/sitecustomize.py
$(BUILD)/gen-trace.c: $(TRACE_PY) $(BUILD)/embed
	$(BUILD)/embed -t ap_trace_py $(TRACE_PY) > $@

$(BUILD)/gen-version.c: FORCE | $(BUILD)
	@printf 'const char ap_version[] = "%s";\nconst char ap_commit[] = "%s";\n' \
		'$(VERSION)' '$(COMMIT)' > $@.tmp
	@cmp -s $@.tmp $@ && rm $@.tmp || mv $@.tmp $@

$(BUILD)/tests/%: tests/unit/%.c $(wildcard tests/unit/*.h) $(BUILD)/libap.a | $(BUILD)
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS) $(LDFLAGS) -o $@ $(filter %.c %.a,$^) $(LDLIBS) $(shell pkg-config --libs cmocka)

$(BUILD)/tests/%: tests/tools/%.c $(BUILD)/libap.a | $(BUILD)
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS) $(LDFLAGS) -o $@ $(filter %.c %.a,$^) $(LDLIBS)

# Drivers the benches time (bench/*.c), built against the library.
$(BUILD)/bench/%: bench/%.c $(BUILD)/libap.a | $(BUILD)
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS) $(LDFLAGS) -o $@ $(filter %.c %.a,$^) $(LDLIBS)

$(BUILD):
	mkdir -p $@

# Debian packages the build and the tests need; installed only when missing.
deps:
	@tests/install-deps

# The reference environments, created when missing (idempotent).
envs: $(BUILD)/apiparity
	@tests/make-envs $(BUILD)/apiparity

# check and demo first install what is missing, then start a fresh make: the
# pkg-config flags above are computed when make starts, so they need the
# -dev packages in place before that.
check: deps
	@$(MAKE) --no-print-directory test

# The whole suite, in the order tests/run takes it.
SUITE   := $(UNIT) $(sort $(wildcard tests/integration/t-*.sh))
test: $(BUILD)/apiparity $(UNIT) $(TOOLS) envs
	@tests/run $(BUILD) $(SUITE)

# Line and branch coverage of src/ (gcov, gcovr) and line coverage of the
# worker (a settrace hook in t-worker's run of its unit tests), each test's counters kept apart (tests/run with
# AP_COVERAGE), the HTML report in build-cov/coverage/html/; fails when the
# suite fails or a figure falls below its floor in tests/coverage.floor.
# With SANITIZE=1 the same build has ASan+UBSan too (build-cov-san/): one run
# of the suite is both the coverage run and the sanitizer run.
coverage: deps
	@$(MAKE) --no-print-directory COVERAGE=1 coverage-run

coverage-run: $(BUILD)/apiparity $(UNIT) $(TOOLS) envs
	@rm -rf $(BUILD)/coverage; find $(BUILD) -name '*.gcda' -delete
	@AP_COVERAGE=$(CURDIR)/$(BUILD)/coverage tests/run $(BUILD) $(SUITE); rc=$$?; \
	tests/coverage-report $(BUILD) || rc=1; exit $$rc

# The tests that race processes or bound hangs, REPS times each under a CPU
# load (tests/flake); none may fail.
REPS ?= 5
flake: deps
	@$(MAKE) --no-print-directory $(BUILD)/apiparity $(UNIT) $(TOOLS) envs
	@tests/flake $(BUILD) $(REPS)

# Sampled mutants (tests/mutants/sample): N one-line mutants of src/ drawn
# with SEED from the lines `make coverage` saw executed, each run against the
# tests that execute its line; fails below a 90 % kill rate (MIN_RATE).
# COV_BUILD is the coverage build whose data it reads (build-cov-san after
# `make coverage SANITIZE=1`).
N    ?= 200
SEED ?= 1
COV_BUILD ?= build-cov
mutants-sample: deps
	@$(MAKE) --no-print-directory $(BUILD)/apiparity $(UNIT) $(TOOLS)
	@tests/mutants/sample $(COV_BUILD) $(BUILD) $(N) $(SEED)

# Mutation testing: every patch of tests/mutants/ is a one-line bug that the
# tests its header names must catch (see tests/mutants/run); MUTANT_JOBS
# mutants at a time; MUTANT_BASELINE=0 skips running the named tests on the
# unpatched tree first (only right after make check passed: .ci/run).
mutants: deps
	@$(MAKE) --no-print-directory mutants-run

mutants-run: $(BUILD)/apiparity $(UNIT) $(TOOLS)
	@tests/mutants/run $(BUILD)

demo: deps
	@$(MAKE) --no-print-directory demo-run

# The README's main job: verify the default target across the reference
# environments (trixie-openreg's real device included), write the evidence
# and the report under out/ (the English Markdown first, so the last report run
# lists it in out/MANIFEST.sha256), review it, and name the page and the PNGs a
# reviewer looks at. Then one operator on numbers, DEMO_OP across trixie,
# trixie-openreg and sid (OpInfo samples, openreg against CPU, sid's CPU
# against trixie's; openreg's known limits named), its evidence and report
# beside, in out-op/ (a directory of its own: out/ holds one target).
DEMO_TARGET := torch.autograd.grad_mode.set_multithreading_enabled.clone
DEMO_OP     := torch.nn.functional.gelu
demo-run: $(BUILD)/apiparity envs
	$(BUILD)/apiparity env show bookworm trixie sid trixie-openreg
	$(BUILD)/apiparity check $(DEMO_TARGET) --envs envs/reference.ini \
		--env bookworm --env trixie --env sid --env trixie-openreg --out out
	$(BUILD)/apiparity report out --lang en --format md > /dev/null && mv out/report.md out/report.en.md
	$(BUILD)/apiparity report out > /dev/null
	$(BUILD)/apiparity check $(DEMO_OP) --envs envs/reference.ini \
		--env trixie --env trixie-openreg --env sid --no-official --out out-op
	$(BUILD)/apiparity report out-op --lang en --format md > /dev/null && mv out-op/report.md out-op/report.en.md
	$(BUILD)/apiparity report out-op > /dev/null
	$(BUILD)/apiparity verify out; rc=$$?; \
	echo "make demo: the page a reviewer opens: out/report.html"; \
	echo "make demo: PNG pictures to paste where SVG is not taken: out/matrix.png$$(for f in out/card-*.png; do printf ' %s' "$$f"; done)"; \
	echo "make demo: $(DEMO_OP) on numbers across trixie, trixie-openreg and sid: out-op/report.html"; \
	exit $$rc

# Every bench once; their rows of bench/RESULTS.md are rewritten from what
# they measured (commit and date included). bench-smoke: one short run of
# each, nothing kept, so that no bench silently stops working (CI runs it).
bench: $(BUILD)/apiparity $(BUILD)/bench/compare-bench
	bench/run-all $(BUILD)/apiparity

bench-smoke: $(BUILD)/apiparity $(BUILD)/bench/compare-bench envs
	bench/run-all --smoke $(BUILD)/apiparity

# Fuzz targets (libFuzzer, clang, ASan+UBSan), each run briefly from its seed
# corpus by tests/run-fuzz; FUZZ_SECONDS sets how long. Everything they build
# and find lands in build/fuzz/ (ignored); a reproducer worth keeping becomes a
# named file of tests/fuzz/corpus/. The library is compiled once, instrumented
# for libFuzzer's coverage (fuzzer-no-link), into build/fuzz/libap-fuzz.a, and
# each target links its harness against it.
FUZZ_CC    := clang
FUZZ_DIR   := build/fuzz
FUZZ_SAN   := address,undefined
FUZZ_CFLAGS := -g -O1 -std=c17 -D_GNU_SOURCE -Wall -Wextra -Werror -fno-sanitize-recover=all \
              -Isrc $(shell pkg-config --cflags $(PKGS) $(DL_PKGS))
FUZZ_OBJ   := $(patsubst src/%.c,$(FUZZ_DIR)/obj/%.o,$(LIB_SRC)) \
              $(patsubst $(BUILD)/%.c,$(FUZZ_DIR)/obj/%.o,$(GEN_SRC))
FUZZERS    := $(patsubst tests/fuzz/%.c,$(FUZZ_DIR)/%,$(wildcard tests/fuzz/fuzz-*.c))

$(FUZZ_DIR)/obj/%.o: src/%.c $(HDRS)
	@mkdir -p $(dir $@)
	$(FUZZ_CC) $(FUZZ_CFLAGS) -fsanitize=fuzzer-no-link,$(FUZZ_SAN) -c -o $@ $<

$(FUZZ_DIR)/obj/gen-%.o: $(BUILD)/gen-%.c
	@mkdir -p $(dir $@)
	$(FUZZ_CC) $(FUZZ_CFLAGS) -fsanitize=fuzzer-no-link,$(FUZZ_SAN) -c -o $@ $<

$(FUZZ_DIR)/libap-fuzz.a: $(FUZZ_OBJ)
	rm -f $@
	ar rcs $@ $^

$(FUZZ_DIR)/fuzz-%: tests/fuzz/fuzz-%.c $(HDRS) $(FUZZ_DIR)/libap-fuzz.a
	$(FUZZ_CC) $(FUZZ_CFLAGS) -fsanitize=fuzzer,$(FUZZ_SAN) -o $@ $< $(FUZZ_DIR)/libap-fuzz.a $(LDLIBS)

fuzz: deps
	@$(MAKE) --no-print-directory $(GEN_SRC) $(FUZZERS)
	@FUZZ_DIR=$(FUZZ_DIR) tests/run-fuzz $(FUZZERS)

# Installs the binary (everything it needs is built into it), its manual
# page, bash completion and the example environments file and policy;
# PREFIX (default /usr/local) and DESTDIR as GNU's conventions have them.
# INSTALL_BIN: the binary to install (default the one built here).
PREFIX      ?= /usr/local
DESTDIR     ?=
INSTALL_BIN ?= $(BUILD)/apiparity
BINDIR      := $(PREFIX)/bin
MAN1DIR     := $(PREFIX)/share/man/man1
DATADIR     := $(PREFIX)/share/apiparity
COMPDIR     := $(PREFIX)/share/bash-completion/completions
INSTALLED   := $(BINDIR)/apiparity $(MAN1DIR)/apiparity.1 $(COMPDIR)/apiparity \
               $(DATADIR)/envs.example.ini $(DATADIR)/policy.example.yaml

install: $(INSTALL_BIN)
	install -d $(DESTDIR)$(BINDIR) $(DESTDIR)$(MAN1DIR) $(DESTDIR)$(DATADIR) $(DESTDIR)$(COMPDIR)
	install -m 0755 $(INSTALL_BIN) $(DESTDIR)$(BINDIR)/apiparity
	install -m 0644 docs/apiparity.1 $(DESTDIR)$(MAN1DIR)/apiparity.1
	install -m 0644 completion/apiparity.bash $(DESTDIR)$(COMPDIR)/apiparity
	install -m 0644 envs/reference.ini $(DESTDIR)$(DATADIR)/envs.example.ini
	install -m 0644 policies/default.yaml $(DESTDIR)$(DATADIR)/policy.example.yaml

uninstall:
	rm -f $(addprefix $(DESTDIR),$(INSTALLED))
	-rmdir $(DESTDIR)$(DATADIR) 2> /dev/null

clean:
	rm -rf build build-san build-cov build-cov-san build-nopng build-san-nopng build-cov-nopng build-cov-san-nopng

.PHONY: all install uninstall deps envs check test coverage coverage-run mutants mutants-run mutants-sample flake demo demo-run bench \
	bench-smoke fuzz clean FORCE worker-modules
