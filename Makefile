# mmlab: Debian linux-source-6.1 + quilt series -> UML (and x86 in QEMU) ->
# booted, tested, debuggable. `make` sets up and runs; `make test` runs it all.
# Targets are listed by `make help`.

SHELL      := /bin/bash
ROOT       := $(CURDIR)
S          := $(ROOT)/scripts

# The kernel trees, as data (trees.mk; machines.mk below has the machines).
# $(call mfield,NAME,FIELD): a field of machine (or tree) NAME, its `from` block
# filling the fields it does not give (scripts/mmlab/conf.py reads the same).
include $(ROOT)/trees.mk
mfield = $(if $(filter undefined,$(origin $(1).$(2))),$(if $(filter-out undefined,$(origin $(1).from)),$(call mfield,$($(1).from),$(2))),$($(1).$(2)))

# The tree: KVER=6.1 or 6.12; else the version of KSRC= (a tree of your
# own); else the one this Debian release's linux-source depends on (trees.mk's
# `default`: 6.1 on Debian 12, 6.12 on Debian 13). Each tree builds into its
# own build/KVER; ./linux and ./rootfs.img are the last tree built.
RELEASE    := $(shell . /etc/os-release 2>/dev/null && echo $$VERSION_CODENAME)
ifdef KSRC
KSRC       := $(abspath $(KSRC))
KSRC_VER   := $(shell sed -n -e 's/^VERSION = //p' -e 's/^PATCHLEVEL = //p' $(KSRC)/Makefile 2>/dev/null | paste -sd.)
endif
RELEASE_TREE := $(or $(firstword $(foreach t,$(trees),$(if $(filter $(RELEASE),$(call mfield,$(t),default)),$(t)))),$(firstword $(trees)))
KVER       ?= $(or $(KSRC_VER),$(RELEASE_TREE))
KVER_BAD   := $(if $(and $(KSRC),$(if $(KSRC_VER),,1)),nokernel,$(if $(filter $(KVER),$(trees)),$(if \
	$(and $(KSRC),$(filter-out $(KVER),$(KSRC_VER))),ksrc),unknown))
export KVER
BUILD      := $(ROOT)/build/$(KVER)
export MMLAB_BUILD := $(BUILD)
# One make at a time per checkout (all trees: one kernel build at a time):
# a second one waits, naming the first (scripts/lock.sh). Interactive
# targets hold the lock only while building.
LOCKDIR    := $(ROOT)/build
NOLOCK_GOALS := help doctor deps run gdb qemu-run qemu-gdb fresh-check machines machine-fields tests-for
LOCKED     = $(if $(MMLAB_LOCKED),,MMLAB_GOALS="$@" $(S)/lock.sh $(LOCKDIR))
GOALS      := $(or $(MAKECMDGOALS),all)
ifeq ($(MMLAB_LOCKED),)
NEED_LOCK  := $(filter-out $(NOLOCK_GOALS),$(GOALS))
endif
ifneq ($(KVER_BAD),)
.PHONY: $(GOALS)
$(firstword $(GOALS)):
	@$(S)/kver.sh $(KVER_BAD) "$(KVER)" "$(KSRC)" "$(KSRC_VER)" "$(RELEASE)" $(trees)
$(wordlist 2,$(words $(GOALS)),$(GOALS)):
	@:
else ifneq ($(NEED_LOCK),)
.PHONY: $(GOALS)
$(firstword $(GOALS)):
	@MMLAB_GOALS="$(GOALS)" $(S)/lock.sh $(LOCKDIR) $(MAKE) --no-print-directory $(MAKECMDGOALS)
$(wordlist 2,$(words $(GOALS)),$(GOALS)):
	@:
else
# The machines, as data (one block each): everything below that differs
# per machine or tree reads machines.mk and trees.mk.
include $(ROOT)/machines.mk
TREE       := $(KVER)
ifdef KSRC
GITDIR     := $(BUILD)/ksrc.git
export KSRC_IS_USER := 1
else
KSRC       := $(BUILD)/src
GITDIR     := $(BUILD)/tree.git
endif
export MMLAB_TREE := $(TREE)
# The tree's quilt series and its patches (patches/KVER).
SERIES     := $(ROOT)/$(call mfield,$(TREE),series)
PATCHES    := $(patsubst %/,%,$(dir $(SERIES)))
LOGS       := $(BUILD)/logs
JOBS       ?= $(shell nproc)
TIMEOUT    ?= 300
V          ?= 0
SERIES_SUM := $(GITDIR)/mmlab-series.sum
# The host's Python: one package, scripts/mmlab (python3 -m mmlab.NAME).
PY         := env PYTHONPATH=$(S) /usr/bin/python3 -m mmlab.

# ccache when present (make deps installs it), through scripts/kcc.sh (its
# depend mode where that is safe); evaluated when used.
HAVE_CCACHE = $(shell command -v ccache)
# $(call kcc,NAME): machine NAME's compiler line for kbuild's CC
kcc = $(strip $(if $(HAVE_CCACHE),$(S)/kcc.sh )$(call mfield,$(1),cross)gcc)
# $(call plugin_flag,NAME): in a recipe, sets the shell's $$plugin to the
# -fplugin= flag machine NAME's code is compiled with, or to nothing
# (scripts/plugin.sh decides, and builds the plugin); empty for a machine
# without a plugin (machines.mk: plugin, plugin_gcc).
plugin_flag = $(if $(call mfield,$(1),plugin),plugin=$$($(S)/plugin.sh $(1) $(BUILD)/tools) || exit 2;)
# $(call boot,NAME) ARGS: boot machine NAME's kernel (scripts/mmlab/boot.py)
boot = $(PY)boot $(1) --ksrc $(KSRC) --logdir $(LOGS) $(if $(QEMU_TIMEOUT),--timeout $(QEMU_TIMEOUT)) \
       $(if $(filter 1,$(V)),--verbose)
# The other architectures: the machines with a root of their own.
ARCHES     := $(foreach m,$(machines),$(if $(filter own,$(call mfield,$(m),root)),$(m)))

TESTS      := $(basename $(notdir $(wildcard tests/*.c)))
TEST_BINS  := $(addprefix $(BUILD)/tests/,$(TESTS))
TEST_CFLAGS := -static -pthread -O2 -g -Wall -Wextra -I$(KSRC)/tools/testing/selftests -Itests
# The tree's reviewed KCSAN reports (trees.mk: kcsan_known) become the
# guest's /etc/mmlab/kcsan-known.
KCSAN_KNOWN := $(call mfield,$(TREE),kcsan_known)
ROOTFS_IN  := $(shell find rootfs -type f -o -type l) $(S)/mkrootfs.sh tests/manifest $(KCSAN_KNOWN)

.NOTPARALLEL:
.PHONY: FORCE all deps tree series series-refresh series-reset series-edits series-check uml config-uml x86 config-x86 \
        series-export rootfs tests test test-uml test-host run doctor clean distclean help \
        initramfs qemu-verify qemu-run qemu-gdb gdb kselftest kselftest-uml kselftest-x86 \
        soak soak-uml soak-x86 soak-kcsan uml-kasan x86-kasan x86-kcsan bench test-uml-all fresh-check flake mutate mutate-quick \
        kcidb bisect bisect-check bundle lava-job lava-check arch-deps arch-verify machines

all: deps uml rootfs
	@$(MAKE) -s test-uml

help:
	@echo "Tree: KVER=$(KVER) ($(call mfield,$(KVER),package)$(if $(KSRC_IS_USER),$(comma) KSRC=$(KSRC)); this release, $(or $(RELEASE),unknown), defaults to $(RELEASE_TREE); trees: $(trees))"
	@echo "./linux and ./rootfs.img: $$(t=$$(readlink linux 2>/dev/null); t=$${t#build/}; \
	    [ -n "$$t" ] && echo "tree $${t%%/*} ($$(readlink linux), $$(readlink rootfs.img))" || echo "not built yet (make)")"
	@echo "build/KVER below is build/$(KVER); make KVER=... for another tree."; echo
	@sed -n 's/^## //p' $(MAKEFILE_LIST)
	@echo; echo "Variables (make VAR=value or the environment; docs/variables.md says more):"
	@awk -F' *[|] *' '/^[|] `[A-Z]/ { gsub(/`/, "", $$2); printf "  %-16s %s (default: %s)\n", $$2, $$5, $$3 }' \
	    docs/variables.md

machines:
	@$(PY)conf table

# Every field of every machine and tree as make reads it, "NAME.FIELD<tab>
# VALUE" (tests/host/test_tables.py holds conf.py's reading against it).
tab := $(shell printf '\t')
machine-fields:
	@:$(foreach n,$(machines),$(foreach f,$(fields),$(info $(n).$(f)$(tab)$(call mfield,$(n),$(f)))))
	@:$(foreach n,$(trees),$(foreach f,$(tree_fields),$(info $(n).$(f)$(tab)$(call mfield,$(n),$(f)))))

# The tests machine MACHINE's guest carries (tests/manifest), a line each.
tests-for:
	@$(if $(filter $(MACHINE),$(machines)),printf '%s\n' $(call tests_for,$(MACHINE)), \
	    echo "mmlab: error: MACHINE=$(MACHINE) is not a machine" >&2; \
	    echo "mmlab:   fix: MACHINE= one of $(machines)" >&2; exit 2)

## make                 install packages, unpack + patch the tree, build UML + rootfs, boot the suite once
## make test            this tree's whole suite (host checks, UML and x86 suites with KUnit, vm selftests, soak), the other tree's quick ones; CI runs this
## make test-full       make test with the other tree's whole suites, both releases' fresh roots and this tree's other architectures
## make test-uml        the edit -> test loop: incremental UML rebuild + boot + KUnit + quick tests (T=a,b others; T=test all)
## make test-host       the host tooling's tests (tests/host/): unit tests first, then what the built kernels allow
## make test-uml-all    the whole UML suite (vm selftests, bench, 20 s soak too), as make test runs it
## make flake          rerun one part RUNS times (PART=test-uml, RUNS=20; PART=qemu-verify RUNS=5): each test's pass rate
## make mutate         mutation testing: every bug of the tree's tests/mutants/KVER must fail the suite (M=name runs one)
## make fresh-check     make and ./linux ubd0=rootfs.img on a fresh Debian 12 root (mmdebstrap; root; FRESH_CCACHE=cold: the root's own empty ccache)
## make run             boot UML to an interactive shell (the image stays unmodified)
## make qemu-verify     x86_64 from the same tree in QEMU (KVM if a probe boots, else TCG; QEMU_ACCEL=kvm|tcg)
## make qemu-verify-quick  x86_64's KUnit and quick guest tests, as make test-uml on UML
## make qemu-verify-arm64  the same tree cross-built for arm64 and booted in QEMU (TCG, virt): KUnit + our tests
## make qemu-verify-arm  the same for 32-bit arm (Cortex-A15, LPAE)
## make qemu-verify-s390x  the same for s390x (s390-ccw-virtio): a gather that frees each page at once
## make qemu-verify-sh4  the same for sh4 (r2d: one CPU, 64 MiB; programs on musl)
## make arch-verify     qemu-verify-ARCH for every other architecture (arm64, arm, s390x, sh4); make test runs it
## make kselftest       the tree's mm selftests (6.1: tests/kselftest-vm.list, 6.12: kselftest-mm.list) on UML and on x86
## make bench           stock vs the series (options off, on) on x86_64 in QEMU, 2 NUMA nodes: ns/page ratios, TLB shootdowns, counters, plot (BOOTS=5)
## make soak            stress-ng + trinity + our tests under fault injection: KASAN UML and x86, KCSAN x86 (SOAK_SECONDS=180 SEED=n SOAK_TESTS=a,b)
## make kcidb           the last results as one KCIDB v5.3 document, build/KVER/logs/kcidb.json, validated (KCIDB_URL= KCIDB_TOKEN= also submit it)
## make bisect          GOOD=<patch> BAD=<patch>: the first patch of the series that fails T=tests (default kunit; BISECT_ON=x86)
## make bisect-check    make bisect over the series with a known bad patch slipped in: it must name it
## make bundle          build/KVER/bundles/*.tar.gz: kernel, config, image, series, command line, logs of a run (RUN=name; default the last failed)
## make lava-job        build/KVER/lava/: a LAVA job and device for the x86_64 suite (Debian's lava-dispatcher runs it)
## make lava-check      run that job with lava-run here; LAVA's results.yaml must agree with our KTAP, case for case
## make qemu-run        the x86_64 guest with an interactive shell
## make qemu-gdb        QEMU -s -S (nokaslr) with gdb attached, lx-* helpers loaded (WORKLOAD=name)
## make gdb             UML under gdb with the MM helpers (WORKLOAD=munmap: boot into that test)
## make deps            apt-get install what the build needs
## make tree            unpack the tree's Debian tarball (/usr/src/linux-source-KVER.tar.xz) to build/KVER/src (KSRC=/path: your own 6.1 or 6.12 tree)
## make series          apply the tree's series, patches/KVER/series (re-applied when a patch or the series changed)
## make series-refresh  turn local edits in the tree into the top patch of the series (P=0007: into that one)
## make series-reset    discard local edits in the tree (back to pristine + series)
## make series-edits    list local edits in the tree
## make series-check    checkpatch --strict, git am, every prefix builds (UML), 0 bytes differ with the options off (UML, x86)
## make series-export   the series as mail in build/KVER/export/: From and Signed-off-by you (git config user.name, user.email), [PATCH n/N], a cover letter with the numbers; checkpatch --strict
## make config-uml      build/KVER/uml/.config = ARCH=um defconfig + uml-config, validated
## make uml             build the UML kernel; ./linux links to it
## make x86             build x86_64 (bzImage) from the same tree in build/KVER/x86 (config: qemu-config)
## make arm64 / arm / s390x / sh4  cross-build that kernel (build/KVER/ARCH) and its initramfs, no boot
## make rootfs          build/KVER/rootfs.img (ext4, mkfs.ext4 -d); ./rootfs.img links to it
## make machines       the machines (machines.mk) and kernel trees (trees.mk) the targets build, a line each
## make doctor          check this machine: packages, tree, tmpfs, ptrace, kvm, disk
## make clean           remove build outputs but keep the unpacked tree; distclean removes build/

# The host's packages, the tree's, and those of the machines built with the
# host's compiler (uml, x86 and their kernels); arch-deps adds the others'.
HOST_PACKAGES = $(if $(KSRC_IS_USER),,$(call mfield,$(TREE),package)) \
	$(sort $(foreach m,$(machines),$(if $(call mfield,$(m),cross),,$(call mfield,$(m),packages))))
deps:
	@$(S)/deps.sh $(S)/packages $(HOST_PACKAGES)

tree: deps
	@$(S)/tree.sh $(KSRC) $(GITDIR)

series: tree
	@$(S)/series.sh apply $(KSRC) $(GITDIR) $(PATCHES)

series-refresh: tree
	@$(S)/series.sh refresh $(KSRC) $(GITDIR) $(PATCHES) $(P)

series-reset: tree
	@$(S)/series.sh reset $(KSRC) $(GITDIR)

series-check: series
	@$(S)/series-check.sh $(KSRC) $(GITDIR) $(PATCHES) $(BUILD)/check \
	    $(ROOT)/$(call mfield,uml,fragments) $(ROOT)/$(call mfield,x86,fragments)

# The series as mail, signed off by the repository's git identity (which
# must not be a placeholder), with a cover letter (cover-letter.txt beside the series).
series-export: tree
	@$(S)/series-export.sh $(ROOT) $(PATCHES) $(BUILD)/export $(KSRC) $(GITDIR)

series-edits: tree
	@$(S)/series.sh edits $(KSRC) $(GITDIR)

$(SERIES_SUM): | series

# One kernel per row of machines.mk, built from the tree in build/NAME:
# `make config-NAME` makes its .config (base + fragments, merged and every
# option checked; redone when a fragment or the series changes), `make NAME`
# builds it: with its root when the machine has one of its own (root = own),
# with ./linux linked to it when the row says so (link).
define machine_rules
$$(BUILD)/$(1)/.mmlab-fragment: $(call mfield,$(1),fragments) $$(SERIES_SUM) $$(ROOT)/machines.mk
	@CROSS_COMPILE=$(call mfield,$(1),cross) $$(S)/config.sh $$(KSRC) $$(BUILD)/$(1) $(call mfield,$(1),arch) \
	    "$(call mfield,$(1),base)" $(addprefix $$(ROOT)/,$(call mfield,$(1),fragments))
	@echo "mmlab: $$(BUILD)/$(1)/.config ready ($(subst $(space), + ,$(strip $(call mfield,$(1),base) \
	    $(call mfield,$(1),fragments))), every option checked)"
.PHONY: $(1) config-$(1)
config-$(1): $(if $(call mfield,$(1),cross),arch-deps) series $$(BUILD)/$(1)/.mmlab-fragment
$(1): config-$(1)
	@$$(call plugin_flag,$(1)) CROSS_COMPILE=$(call mfield,$(1),cross) $$(PY)kbuild $(1) $$(KSRC) $$(BUILD)/$(1) \
	    $(call mfield,$(1),arch) "$$(call kcc,$(1))$(if $(call mfield,$(1),plugin),$$$${plugin:+ $$$$plugin})" $$(JOBS) $(call mfield,$(1),targets)
$(if $(call mfield,$(1),link),	@$$(call link_tree,build/$(KVER)/$(1)/$(call mfield,$(1),image),$(call mfield,$(1),link))
	@$$(S)/gdb-setup.sh $$(ROOT) $$(BUILD)/$(1))
$(if $(filter own,$(call mfield,$(1),root)),	@$$(MAKE) -s $$(BUILD)/initramfs-$(1).cpio)
endef
comma      := ,
space      := $(subst ,, )
# $(call link_tree[,TARGET,LINK]): ./rootfs.img and ./linux (or LINK to
# TARGET) point into build/KVER, both at one tree: the one last built.
link_tree = $(if $(2),ln -sfn $(1) $(2);) ln -sfn build/$(KVER)/rootfs.img rootfs.img; \
	[ -e build/$(KVER)/uml/linux ] && ln -sfn build/$(KVER)/uml/linux linux; \
	echo "mmlab: ./linux and ./rootfs.img are tree $(KVER) (build/$(KVER))"
$(foreach m,$(machines),$(if $(call mfield,$(m),built_by),,$(eval $(call machine_rules,$(m)))))

$(BUILD)/tests/%: tests/%.c tests/mmlab.h | tree
	@mkdir -p $(dir $@)
	gcc $(TEST_CFLAGS) -o $@ $<

tests: $(TEST_BINS)

# The tree's mm selftests, static, for both guests (the list: trees.mk's
# kselftests, tests/kselftest-vm.list on 6.1).
KSFT_LIST := $(call mfield,$(TREE),kselftests)
$(BUILD)/ksft/vm/list: $(KSFT_LIST) $(S)/kselftest.sh $(SERIES) $(wildcard $(PATCHES)/*.patch) | series
	@$(S)/kselftest.sh $(KSRC) $(BUILD)/ksft $(KSFT_LIST)

# The functions the series and any local edit change, for the guest's KCSAN
# triage (rootfs/bin/mmlab-kcsan). Rewritten only when the tree's diff does.
SERIES_FUNCS := $(BUILD)/series-functions
$(SERIES_FUNCS): FORCE | series
	@$(PY)series_functions $(KSRC) $(GITDIR) $@
FORCE:

$(BUILD)/rootfs.img: $(ROOTFS_IN) $(TEST_BINS) $(BUILD)/ksft/vm/list $(SERIES_FUNCS)
	@SERIES_FUNCTIONS=$(SERIES_FUNCS) KCSAN_KNOWN=$(KCSAN_KNOWN) $(S)/mkrootfs.sh $(BUILD)/stage $@ $(BUILD)/ksft/vm $(TEST_BINS)

rootfs: $(BUILD)/rootfs.img
	@$(call link_tree)

$(BUILD)/initramfs.cpio: $(BUILD)/rootfs.img $(S)/mkinitramfs.sh
	@$(S)/mkinitramfs.sh $(BUILD)/stage $@ $(KSRC) $(BUILD)/tools

initramfs: tree $(BUILD)/initramfs.cpio

qemu-verify: x86 initramfs
	@$(call boot,x86) --name qemu-verify --mode $(if $(T),$(T),test)

# KUnit and the quick guest tests on x86_64, as test-uml on UML: make test
# runs both on the release's other tree.
qemu-verify-quick: x86 initramfs
	@$(call boot,x86) --name qemu-verify-quick --mode quick

qemu-run:
	@$(LOCKED) $(MAKE) -s x86 initramfs
	@$(call boot,x86) --interactive --mode shell

qemu-gdb:
	@$(LOCKED) $(MAKE) -s x86 initramfs
	@$(S)/qemu-gdb.sh "$(call boot,x86)" $(BUILD)/x86 $(ROOT) $(WORKLOAD)

# The same tree on the other architectures (the machines of machines.mk
# with a root of their own), in QEMU under TCG: make NAME cross-builds it
# into build/NAME, the tests the manifest gives it statically into
# build/tests-NAME, packs them with busybox for it (Debian's; from Debian's
# source with musl where its libc is musl), and make qemu-verify-NAME runs
# KUnit, the tests and kernel_log.
arch-deps:
	@$(S)/deps.sh $(sort $(foreach m,$(ARCHES),$(call mfield,$(m),packages)))

# A GCC plugin everything for a machine is compiled with (its `plugin`),
# where its compiler needs it (`plugin_gcc`): scripts/plugin.sh. A changed
# plugin rebuilds musl, busybox and the tests; the kernel is rebuilt when
# the plugin is turned on or off, not when it changes (kbuild compares
# the CC line only): rm -rf build/KVER/NAME for that.

arch-verify: $(addprefix qemu-verify-,$(ARCHES))

# The tests a machine's guest carries: those of tests/manifest whose
# machines are `all` or name it (uml and x86 share one root: every test).
tests_for = $(shell awk 'substr($$1, 1, 1) != "\043" && NF >= 3 && \
	($$3 == "all" || index("," $$3 ",", ",$(1),")) { print $$1 }' $(ROOT)/tests/manifest)
define cross_rules
$(1)_MUSL   := $(filter musl,$(call mfield,$(1),libc))
$(1)_TESTS  := $$(call tests_for,$(1))
# cross-busybox.sh decides whether to build (busybox.cflags), and leaves
# the file's time alone when it does not.
$$(BUILD)/busybox-$(1)/busybox: FORCE
	@$$(call plugin_flag,$(1)) CROSS_CFLAGS="$(if $(call mfield,$(1),plugin),$$$$plugin)" $$(S)/cross-busybox.sh $(1) $$(BUILD)/busybox-$(1)

$$(BUILD)/tests-$(1)/%: tests/%.c tests/mmlab.h $$(if $$($(1)_MUSL),$$(BUILD)/busybox-$(1)/busybox) | tree
	@mkdir -p $$(dir $$@)
	$$(call plugin_flag,$(1)) $(call mfield,$(1),cross)gcc $(if $(call mfield,$(1),plugin),$$$$plugin )$$(if $$($(1)_MUSL),-specs $$(BUILD)/busybox-$(1)/musl/lib/musl-gcc.specs) \
	    $$(TEST_CFLAGS) -o $$@ $$<

$$(BUILD)/initramfs-$(1).cpio: $$(ROOTFS_IN) $$($(1)_TESTS:%=$$(BUILD)/tests-$(1)/%) $$(S)/mkinitramfs.sh \
	    $$(BUILD)/busybox-$(1)/busybox $$(SERIES_FUNCS)
	@CROSS_BUSYBOX=$$(BUILD)/busybox-$(1)/busybox SERIES_FUNCTIONS=$$(SERIES_FUNCS) KCSAN_KNOWN=$$(KCSAN_KNOWN) $$(S)/mkrootfs.sh $$(BUILD)/stage-$(1) none none \
	    $$($(1)_TESTS:%=$$(BUILD)/tests-$(1)/%)
	@$$(S)/mkinitramfs.sh $$(BUILD)/stage-$(1) $$@ $$(KSRC) $$(BUILD)/tools

.PHONY: qemu-verify-$(1)
qemu-verify-$(1): $(1)
	@$$(call boot,$(1)) --name qemu-verify-$(1) \
	    --mode $$(if $$(T),$$(T),kunit$$(comma)$$(subst $$(space),$$(comma),$$($(1)_TESTS)))
endef
$(foreach a,$(ARCHES),$(eval $(call cross_rules,$(a))))

# The edit -> test loop: KUnit and the quick guest tests (T= picks others).
test-uml: uml rootfs
	@$(call boot,uml) --name test-uml --timeout $(TIMEOUT) --mode $(if $(T),$(T),quick)

# The whole UML suite, as make test runs it: with the vm selftests, the
# benchmark and a 20 s soak.
test-uml-all: uml rootfs
	@$(call boot,uml) --name test-uml-all --timeout $(TIMEOUT) --mode test

run:
	@$(LOCKED) $(MAKE) -s uml rootfs
	@$(call boot,uml) --interactive --mode shell

# UML under gdb, booted into WORKLOAD (a test binary, e.g. munmap) or a shell.
gdb:
	@$(LOCKED) $(MAKE) -s uml rootfs
	@echo "mmlab: UML under gdb (mmlab.mode=$(or $(WORKLOAD),shell)); 'run' boots, Ctrl-C stops, mm-break gather COMM"
	@gdb -iex "add-auto-load-safe-path $(ROOT)" -x gdb-scripts/uml.gdb \
	    --args ./linux ubd0r=$(BUILD)/rootfs.img mem=$(uml.mem) mmlab.mode=$(or $(WORKLOAD),shell)

# The vm selftests alone, on UML and on x86 (both are also part of make test).
kselftest: deps
	@$(S)/test-all.sh $(LOGS) kselftest-uml kselftest-x86

kselftest-uml: uml rootfs
	@$(call boot,uml) --name kselftest-uml --timeout $(TIMEOUT) --mode kselftest

kselftest-x86: x86 initramfs
	@$(call boot,x86) --name kselftest-x86 --mode kselftest

# Stress under the debug options (rootfs/bin/mmlab-soak) on the sanitizer
# kernels: KASAN on UML and x86_64, KCSAN on x86_64 (3 vCPUs). make soak
# builds the three kernels in turn, then boots the three guests side by side
# (each is one host thread). make test's 20 s soak runs on the plain kernels.
SOAK_SECONDS ?= 180
SOAK_ARGS = --append mmlab.soak=$(SOAK_SECONDS) $(if $(SEED),--append mmlab.seed=$(SEED)) \
	$(if $(SOAK_TESTS),--append mmlab.soak_tests=$(SOAK_TESTS))
SOAK_PARTS := soak-uml soak-x86 soak-kcsan
soak: deps
	@$(MAKE) -s uml-kasan x86-kasan x86-kcsan rootfs initramfs
	@MMLAB_SOAK_BUILT=1 $(S)/test-all.sh --parallel $(LOGS) $(SOAK_PARTS)

# Each part alone builds what it boots; under make soak they are built.
soak-uml: $(if $(MMLAB_SOAK_BUILT),,uml-kasan rootfs)
	@$(call boot,uml-kasan) --name soak-uml --timeout $$(( $(SOAK_SECONDS) + 300 )) --mode soak $(SOAK_ARGS)

soak-x86: $(if $(MMLAB_SOAK_BUILT),,x86-kasan initramfs)
	@$(call boot,x86-kasan) --name soak-x86 --timeout $$(( $(SOAK_SECONDS) + 600 )) --mode soak $(SOAK_ARGS)

soak-kcsan: $(if $(MMLAB_SOAK_BUILT),,x86-kcsan initramfs)
	@$(call boot,x86-kcsan) --name soak-kcsan --timeout $$(( $(SOAK_SECONDS) + 600 )) --mode soak $(SOAK_ARGS)

# Stock vs patched x86_64 in QEMU, alternately (scripts/bench.sh; BOOTS=5).
bench: deps series initramfs
	@JOBS=$(JOBS) KCC="$(call kcc,x86)" $(S)/bench.sh $(KSRC) $(GITDIR) $(BUILD) $(ROOT)

# The host tooling's own tests (tests/host/): on a fresh clone the Python
# package's unit tests; the checks that need the tree, a UML or an x86
# kernel skip, naming the target that makes it, until those are built.
test-host: tree
	@tests/host/run.sh $(LOGS)

# lava-check runs the quick suite here: qemu-verify has just run the whole
# x86_64 suite, and the LAVA run shows that LAVA runs ours and agrees.
# BUILD:PART waits for BUILD, which a background make builds meanwhile
# (scripts/test-all.sh): each kernel builds while the guest before it runs.
# *:PART waits for all of them: test-host times guest timeouts, which a
# build beside it skews; the mutants and the bisect edit build/src.
# Every package is installed first: apt beside a background build's apt
# would find dpkg's lock taken.
# make test: this tree's whole suite on UML and x86 (and fresh-check, LAVA,
# the host tests, the mutants, bisect, KCIDB), then every other tree this
# release offers (trees.mk: releases) on UML and x86, each part as
# PART@KVER (scripts/test-all.sh): its quick suites (KUnit and the quick
# guest tests; the whole suites, vm selftests and soak, made it run 65 min
# cold in CI, over the 60 min goal), make test-full its whole suites
# (OTHER_SUITES). A tree the release does not offer is
# one line and its parts counted skipped. make test's fresh-check roots
# only this machine's release (the other release's root builds its tree
# with another gcc, cold: 635 s measured); make test-full checks both and
# adds this tree's other architectures (cross-built, booted in QEMU).
RELEASE_TREES := $(foreach t,$(trees),$(if $(filter $(RELEASE),$(call mfield,$(t),releases)),$(t)))
# x86 first: the last background build is then the other tree's UML kernel,
# and what waits for it (test-uml-all, 3 min) is shorter than qemu-verify.
OTHER_SUITES = qemu-verify-quick test-uml
OTHER_PARTS = $(foreach t,$(filter-out $(TREE),$(trees)),$(if $(filter $(t),$(RELEASE_TREES)), \
	x86@$(t)$(comma)initramfs@$(t):$(word 1,$(OTHER_SUITES))@$(t) \
	uml@$(t)$(comma)rootfs@$(t):$(word 2,$(OTHER_SUITES))@$(t),skipped-tree@$(t)))
# The mutants and the bisect check: on a tree that has its mutants
# (trees.mk: mutants).
MUTANT_PARTS = $(if $(wildcard $(ROOT)/$(call mfield,$(TREE),mutants)/*.patch),*:mutate-quick *:bisect-check,skipped-mutants)
TEST_PARTS = uml,rootfs:test-uml-all fresh-check x86,initramfs:qemu-verify x86,initramfs:lava-check \
	$(OTHER_PARTS) *:test-host $(MUTANT_PARTS) kcidb
ARCH_PARTS = $(foreach a,$(ARCHES),$(a):qemu-verify-$(a))
# Every package first, the other trees' sources too: apt beside a
# background build's apt would find dpkg's lock taken.
TREE_PACKAGES = $(foreach t,$(RELEASE_TREES),$(call mfield,$(t),package))
test-full: arch-deps
test-full: TEST_PARTS += $(ARCH_PARTS)
test-full: OTHER_SUITES = qemu-verify test-uml-all
test: export FRESH_SUITE ?= $(filter bookworm trixie,$(RELEASE))
test test-full: deps
	@$(S)/deps.sh $(TREE_PACKAGES)
	@$(S)/deps.sh --offered $(S)/packages-lava
	@set -f; LAVA_T=quick $(S)/test-all.sh $(LOGS) $(TEST_PARTS)

# $(call skipped,NAME,N,WHY): part NAME counts N skipped, saying WHY in one
# line (LOGS/NAME.summary, as scripts/lib.sh's finish writes it).
skipped = mkdir -p $(LOGS) && echo "mmlab: $(3) ($(2) skipped)" && \
	bash -c '. $(S)/lib.sh && finish "$$@"' - $(LOGS) $(1) 0 0 $(2) 0

# What make test counts skipped, and why, in one line each.
skipped-tree:
	@$(call skipped,skipped-tree,2,tree $(KVER): $(or $(RELEASE),this release)'s apt does not offer $(call mfield,$(KVER),package) (trees.mk: releases $(call mfield,$(KVER),releases)): its UML and x86 suites are not run)
skipped-mutants:
	@$(call skipped,skipped-mutants,2,mutate-quick and bisect-check need the tree's mutants; tree $(KVER) has none in $(call mfield,$(TREE),mutants))

# Mutation testing (scripts/mmlab/mutate.py, tests/mutants/): M=a,b runs those.
# make test runs MUTATE_QUICK, so the harness itself stays tested.
MUTATE_QUICK ?= 09-,22-
# Flake check (scripts/mmlab/flake.py): PART rerun RUNS times, each test's
# pass rate; KVER (or KSRC) and T pass on to each run.
flake:
	@$(PY)flake $(ROOT) $(LOGS) $(or $(RUNS),20) $(or $(PART),test-uml) \
	    $(if $(KSRC_IS_USER),KSRC=$(KSRC),KVER=$(KVER)) $(if $(T),T=$(T))

mutate: series
	@$(PY)mutate $(ROOT) $(KSRC) $(GITDIR) $(LOGS) $(M)

mutate-quick: series
	@SUMMARY=mutate-quick $(PY)mutate $(ROOT) $(KSRC) $(GITDIR) $(LOGS) $(MUTATE_QUICK)

# Results beyond this machine: KCIDB, a bisect over the series, a bundle.
kcidb: deps
	@$(PY)kcidb $(ROOT) $(KSRC) $(LOGS) $(LOGS)/kcidb.json
	@if [ -n "$(KCIDB_URL)" ]; then \
	    [ -n "$$KCIDB_TOKEN" ] || { echo "mmlab: error: KCIDB_URL is set, KCIDB_TOKEN is not" >&2; \
	        echo "mmlab:   fix: KCIDB_TOKEN=<your submission token> make kcidb KCIDB_URL=..." >&2; exit 2; }; \
	    curl -fsS -X POST -H @<(printf 'Authorization: Bearer %s\n' "$$KCIDB_TOKEN") \
	        -H 'Content-Type: application/json' --data-binary @$(LOGS)/kcidb.json "$(KCIDB_URL)" || \
	        { rc=$$?; echo "mmlab: error: curl could not submit to $(KCIDB_URL) (curl exit $$rc)" >&2; \
	          echo "mmlab:   fix: check the URL, the token and the network; build/logs/kcidb.json is kept" >&2; \
	          exit 2; }; \
	    echo "mmlab: submitted build/logs/kcidb.json to $(KCIDB_URL)"; \
	fi

bisect: series
	@T="$(T)" BISECT_ON="$(BISECT_ON)" $(S)/bisect.sh $(ROOT) $(KSRC) $(GITDIR) $(PATCHES) "$(GOOD)" "$(BAD)"

bisect-check: series
	@$(S)/bisect-check.sh $(ROOT) $(KSRC) $(GITDIR) $(BUILD) $(LOGS)

# The x86_64 suite as a LAVA job; lava-check runs it with Debian's lava-run
# (root; it installs scripts/packages-lava first). LAVA_T= a smaller suite.
LAVA_T ?= test
lava-job: deps x86 initramfs
	@$(PY)lava job $(ROOT) $(BUILD)/lava --mode $(LAVA_T)

lava-check: deps x86 initramfs
	@$(S)/deps.sh --offered $(S)/packages-lava
	@if [ -x /usr/bin/lava-run ]; then $(PY)lava check $(ROOT) $(KSRC) $(BUILD)/lava $(LOGS) --mode $(LAVA_T); \
	else $(call skipped,lava-check,1,lava-check: $(or $(RELEASE),this release) has no lava-dispatcher (Debian 13 has none): the LAVA run is skipped); fi

bundle: deps
	@RUN="$(RUN)" $(S)/bundle.sh $(ROOT) $(LOGS) $(BUILD)/bundles

# The README's opening commands on a fresh Debian 12 root (mmdebstrap).
fresh-check: deps
	@$(S)/fresh-check.sh $(ROOT) $(BUILD) $(LOGS)

doctor:
	@RELEASE=$(RELEASE) RELEASE_TREE=$(RELEASE_TREE) TREES="$(trees)" \
	    $(S)/doctor.sh $(KSRC) $(foreach f,tarball version package,$(call mfield,$(TREE),$(f))) $(HOST_PACKAGES)

# clean and distclean: the tree KVER's outputs (build/KVER); the other
# tree's stay. ./linux and ./rootfs.img go when they point into it.
clean:
	rm -rf $(addprefix $(BUILD)/,$(machines)) $(BUILD)/tests $(BUILD)/stage $(BUILD)/rootfs.img \
	       $(BUILD)/initramfs.cpio $(BUILD)/tools $(LOGS) \
	       $(foreach a,$(ARCHES),$(BUILD)/tests-$(a) $(BUILD)/stage-$(a) \
	           $(BUILD)/initramfs-$(a).cpio $(BUILD)/busybox-$(a))
	@$(unlink_tree)

distclean:
	rm -rf $(BUILD)
	@$(unlink_tree)

unlink_tree = for l in linux rootfs.img; do \
	    case $$(readlink $$l) in build/$(KVER)/*) rm -f $$l ;; esac; done; \
	grep -qs '$(BUILD)/' linux-gdb.py && rm -f linux-gdb.py; true
endif
