# mmlab: Debian linux-source-6.1 + quilt series -> UML (and x86 in QEMU) ->
# booted, tested, debuggable. `make` sets up and runs; `make test` runs it all.
# Targets are listed by `make help`.

SHELL      := /bin/bash
ROOT       := $(CURDIR)
BUILD      := $(ROOT)/build
S          := $(ROOT)/scripts

# One make at a time per checkout: a second one waits, naming the first
# (scripts/lock.sh). Interactive targets hold the lock only while building.
NOLOCK_GOALS := help doctor deps run gdb qemu-run qemu-gdb fresh-check
LOCKED     = $(if $(MMLAB_LOCKED),,MMLAB_GOALS="$@" $(S)/lock.sh $(BUILD))
GOALS      := $(or $(MAKECMDGOALS),all)
ifeq ($(MMLAB_LOCKED),)
NEED_LOCK  := $(filter-out $(NOLOCK_GOALS),$(GOALS))
endif
ifneq ($(NEED_LOCK),)
.PHONY: $(GOALS)
$(firstword $(GOALS)):
	@MMLAB_GOALS="$(GOALS)" $(S)/lock.sh $(BUILD) $(MAKE) --no-print-directory $(MAKECMDGOALS)
$(wordlist 2,$(words $(GOALS)),$(GOALS)):
	@:
else
ifdef KSRC
KSRC       := $(abspath $(KSRC))
GITDIR     := $(BUILD)/ksrc.git
export KSRC_IS_USER := 1
else
KSRC       := $(BUILD)/src
GITDIR     := $(BUILD)/tree.git
endif
UML_O      := $(BUILD)/uml
X86_O      := $(BUILD)/x86
# make soak's sanitizer kernels, from the same tree
UML_KASAN_O := $(BUILD)/uml-kasan
X86_KASAN_O := $(BUILD)/x86-kasan
X86_KCSAN_O := $(BUILD)/x86-kcsan
LOGS       := $(BUILD)/logs
JOBS       ?= $(shell nproc)
TIMEOUT    ?= 300
V          ?= 0
SERIES_SUM := $(GITDIR)/mmlab-series.sum

# ccache when present (make deps installs it), through scripts/kcc.sh (its
# depend mode where that is safe); evaluated when used.
KCC         = $(if $(shell command -v ccache),$(S)/kcc.sh gcc,gcc)
# $(call kbuild,NAME,O,ARCH,TARGETS): one kernel build, progress every 30 s
kbuild = @$(S)/kbuild.py $(1) $(KSRC) $(2) $(3) "$(KCC)" $(JOBS) $(4)
# the same for another architecture: $(call kcc_cross,PREFIX)
kcc_cross   = $(if $(shell command -v ccache),$(S)/kcc.sh )$(1)gcc
# $(UBOOT) / $(QBOOT_ANY) --kernel K: boot a UML / x86_64 kernel
UBOOT       = $(S)/boot.py uml --rootfs $(BUILD)/rootfs.img \
              --ksrc $(KSRC) --logdir $(LOGS) $(if $(filter 1,$(V)),--verbose)
BOOT        = $(UBOOT) --kernel $(UML_O)/linux
QBOOT_ANY   = $(S)/boot.py qemu --initrd $(BUILD)/initramfs.cpio --ksrc $(KSRC) --logdir $(LOGS) \
              $(if $(QEMU_TIMEOUT),--timeout $(QEMU_TIMEOUT)) $(if $(filter 1,$(V)),--verbose)
QBOOT       = $(QBOOT_ANY) --kernel $(X86_O)/arch/x86/boot/bzImage

TESTS      := $(basename $(notdir $(wildcard tests/*.c)))
TEST_BINS  := $(addprefix $(BUILD)/tests/,$(TESTS))
TEST_CFLAGS := -static -pthread -O2 -g -Wall -Wextra -I$(KSRC)/tools/testing/selftests -Itests
ROOTFS_IN  := $(shell find rootfs -type f -o -type l) $(S)/mkrootfs.sh

.NOTPARALLEL:
.PHONY: FORCE all deps tree series series-refresh series-reset series-edits series-check uml config-uml x86 config-x86 \
        rootfs tests test test-uml test-host run doctor clean distclean help \
        initramfs qemu-verify qemu-run qemu-gdb gdb kselftest kselftest-uml kselftest-x86 \
        soak soak-uml soak-x86 soak-kcsan uml-kasan x86-kasan x86-kcsan bench test-uml-all fresh-check mutate mutate-quick \
        kcidb bisect bisect-check bundle lava-job lava-check arch-deps arch-verify

all: deps uml rootfs
	@$(MAKE) -s test-uml

help:
	@sed -n 's/^## //p' $(MAKEFILE_LIST)

## make                 install packages, unpack + patch the tree, build UML + rootfs, boot the suite once
## make test            the whole suite (host checks, UML and x86 guest suites with KUnit and vm selftests); CI runs this
## make test-uml        the edit -> test loop: incremental UML rebuild + boot + KUnit + quick tests (T=a,b others; T=test all)
## make test-uml-all    the whole UML suite (vm selftests, bench, 20 s soak too), as make test runs it
## make mutate         mutation testing: every tests/mutants/ bug must fail the suite (M=name runs one)
## make fresh-check     make and ./linux ubd0=rootfs.img on a fresh Debian 12 root (mmdebstrap; root; FRESH_CCACHE=cold: the root's own empty ccache)
## make run             boot UML to an interactive shell (the image stays unmodified)
## make qemu-verify     x86_64 from the same tree in QEMU (KVM if a probe boots, else TCG; QEMU_ACCEL=kvm|tcg)
## make qemu-verify-arm64  the same tree cross-built for arm64 and booted in QEMU (TCG, virt): KUnit + our tests
## make qemu-verify-arm  the same for 32-bit arm (Cortex-A15, LPAE)
## make qemu-verify-s390x  the same for s390x (s390-ccw-virtio): a gather that frees each page at once
## make qemu-verify-sh4  the same for sh4 (r2d: one CPU, 64 MiB; programs on musl)
## make arch-verify     qemu-verify-ARCH for every other architecture (arm64, arm, s390x, sh4); make test runs it
## make kselftest       the tree's vm selftests (tests/kselftest-vm.list) on UML and on x86
## make bench           stock vs the series (options off, on) on x86_64 in QEMU, 2 NUMA nodes: ns/page ratios, TLB shootdowns, counters, plot (BOOTS=5)
## make soak            stress-ng + trinity + our tests under fault injection: KASAN UML and x86, KCSAN x86 (SOAK_SECONDS=180 SEED=n)
## make kcidb           the last results as one KCIDB v5.3 document, build/logs/kcidb.json, validated (KCIDB_URL= KCIDB_TOKEN= also submit it)
## make bisect          GOOD=<patch> BAD=<patch>: the first patch of the series that fails T=tests (default kunit; BISECT_ON=x86)
## make bisect-check    make bisect over the series with a known bad patch slipped in: it must name it
## make bundle          build/bundles/*.tar.gz: kernel, config, image, series, command line, logs of a run (RUN=name; default the last failed)
## make lava-job        build/lava/: a LAVA job and device for the x86_64 suite (Debian's lava-dispatcher runs it)
## make lava-check      run that job with lava-run here; LAVA's results.yaml must agree with our KTAP, case for case
## make qemu-run        the x86_64 guest with an interactive shell
## make qemu-gdb        QEMU -s -S (nokaslr) with gdb attached, lx-* helpers loaded (WORKLOAD=name)
## make gdb             UML under gdb with the MM helpers (WORKLOAD=munmap: boot into that test)
## make deps            apt-get install what the build needs
## make tree            unpack /usr/src/linux-source-6.1.tar.xz to build/src (KSRC=/path: your 6.1 tree)
## make series          apply patches/series (re-applied when a patch or the series changed)
## make series-refresh  turn local edits in the tree into the top patch of the series (P=0007: into that one)
## make series-reset    discard local edits in the tree (back to pristine + series)
## make series-edits    list local edits in the tree
## make series-check    checkpatch --strict, git am, every prefix builds (UML), 0 bytes differ with the options off (UML, x86)
## make config-uml      build/uml/.config = ARCH=um defconfig + uml-config, validated
## make uml             build the UML kernel; ./linux links to it
## make x86             build x86_64 (bzImage) from the same tree in build/x86 (config: qemu-config)
## make arm64 / arm / s390x / sh4  cross-build that kernel (build/ARCH) and its initramfs, no boot
## make rootfs          build/rootfs.img (ext4, mkfs.ext4 -d); ./rootfs.img links to it
## make doctor          check this machine: packages, tree, tmpfs, ptrace, kvm, disk
## make clean           remove build outputs but keep the unpacked tree; distclean removes build/

deps:
	@$(S)/deps.sh

tree: deps
	@$(S)/tree.sh $(KSRC) $(GITDIR)

series: tree
	@$(S)/series.sh apply $(KSRC) $(GITDIR) $(ROOT)/patches

series-refresh: tree
	@$(S)/series.sh refresh $(KSRC) $(GITDIR) $(ROOT)/patches $(P)

series-reset: tree
	@$(S)/series.sh reset $(KSRC) $(GITDIR)

series-check: series
	@$(S)/series-check.sh $(KSRC) $(GITDIR) $(ROOT)/patches $(BUILD)/check $(ROOT)/uml-config $(ROOT)/qemu-config

series-edits: tree
	@$(S)/series.sh edits $(KSRC) $(GITDIR)

# The config is redone when the fragment or the series (new Kconfig options) changes.
$(UML_O)/.mmlab-fragment: uml-config $(SERIES_SUM)
	@$(S)/config.sh $(KSRC) $(UML_O) um defconfig $(ROOT)/uml-config
	@echo "mmlab: $(UML_O)/.config ready (defconfig + uml-config, every option checked)"

$(SERIES_SUM): | series

config-uml: series $(UML_O)/.mmlab-fragment

uml: config-uml
	$(call kbuild,UML,$(UML_O),um,linux scripts_gdb)
	@ln -sfn build/uml/linux linux
	@$(S)/gdb-setup.sh $(ROOT) $(UML_O)

$(X86_O)/.mmlab-fragment: qemu-config $(SERIES_SUM)
	@$(S)/config.sh $(KSRC) $(X86_O) x86_64 "x86_64_defconfig kvm_guest.config" $(ROOT)/qemu-config
	@echo "mmlab: $(X86_O)/.config ready (x86_64_defconfig + kvm_guest.config + qemu-config, checked)"

config-x86: series $(X86_O)/.mmlab-fragment

x86: config-x86
	$(call kbuild,x86_64,$(X86_O),x86_64,bzImage scripts_gdb)

$(BUILD)/tests/%: tests/%.c tests/mmlab.h | tree
	@mkdir -p $(dir $@)
	gcc $(TEST_CFLAGS) -o $@ $<

tests: $(TEST_BINS)

# The tree's vm selftests, static, for both guests (tests/kselftest-vm.list).
KSFT_LIST := tests/kselftest-vm.list
$(BUILD)/ksft/vm/list: $(KSFT_LIST) $(S)/kselftest.sh patches/series $(wildcard patches/*.patch) | series
	@$(S)/kselftest.sh $(KSRC) $(BUILD)/ksft $(KSFT_LIST)

# The functions the series and any local edit change, for the guest's KCSAN
# triage (rootfs/bin/mmlab-kcsan). Rewritten only when the tree's diff does.
SERIES_FUNCS := $(BUILD)/series-functions
$(SERIES_FUNCS): FORCE | series
	@$(S)/series-functions.py $(KSRC) $(GITDIR) $@
FORCE:

$(BUILD)/rootfs.img: $(ROOTFS_IN) $(TEST_BINS) $(BUILD)/ksft/vm/list $(SERIES_FUNCS)
	@SERIES_FUNCTIONS=$(SERIES_FUNCS) $(S)/mkrootfs.sh $(BUILD)/stage $@ $(BUILD)/ksft/vm $(TEST_BINS)

rootfs: $(BUILD)/rootfs.img
	@ln -sfn build/rootfs.img rootfs.img

$(BUILD)/initramfs.cpio: $(BUILD)/rootfs.img $(S)/mkinitramfs.sh
	@$(S)/mkinitramfs.sh $(BUILD)/stage $@ $(KSRC) $(BUILD)/tools

initramfs: tree $(BUILD)/initramfs.cpio

qemu-verify: x86 initramfs
	@$(QBOOT) --name qemu-verify --mode $(if $(T),$(T),test)

qemu-run:
	@$(LOCKED) $(MAKE) -s x86 initramfs
	@$(QBOOT) --interactive --mode shell

qemu-gdb:
	@$(LOCKED) $(MAKE) -s x86 initramfs
	@$(S)/qemu-gdb.sh "$(QBOOT)" $(X86_O) $(ROOT) $(WORKLOAD)

# The same tree on other architectures, in QEMU under TCG: make
# qemu-verify-ARCH cross-builds it into build/ARCH (config: qemu-config +
# ARCH-config over the base below), our tests statically into
# build/tests-ARCH, packs them with busybox for ARCH (Debian's; sh4's is
# built from Debian's source), and runs KUnit, the tests and kernel_log.
# Per arch: Kconfig's ARCH, the compiler prefix, Debian's name (for
# busybox), the base config.
ARCHES       := arm64 arm s390x sh4
arm64_KARCH  := arm64
arm64_CROSS  := aarch64-linux-gnu-
arm64_DEB    := arm64
arm64_BASE   := alldefconfig
arm64_IMAGE  := arch/arm64/boot/Image
arm_KARCH    := arm
arm_CROSS    := arm-linux-gnueabi-
arm_DEB      := armel
arm_BASE     := alldefconfig
arm_IMAGE    := arch/arm/boot/zImage
s390x_KARCH  := s390
s390x_CROSS  := s390x-linux-gnu-
s390x_DEB    := s390x
s390x_BASE   := alldefconfig
s390x_IMAGE  := arch/s390/boot/bzImage
sh4_KARCH    := sh
sh4_CROSS    := sh4-linux-gnu-
sh4_DEB      := sh4
sh4_BASE     := rts7751r2dplus_defconfig
sh4_IMAGE    := arch/sh/boot/zImage
# Debian 12's gcc-sh4 (12.2) makes wrong code in its sh_treg_combine passes:
# everything for sh4 is compiled with a plugin that turns them off. Its
# glibc has that wrong code too: sh4 programs link with musl, built with
# busybox by cross-busybox.sh. ARCH_UCFLAGS/ARCH_UDEPS are for programs.
SH_PLUGIN    := $(BUILD)/tools/sh-treg-combine-off.so
sh4_CFLAGS   := -fplugin=$(SH_PLUGIN)
sh4_DEPS     := $(SH_PLUGIN)
sh4_UCFLAGS  := $(sh4_CFLAGS) -specs $(BUILD)/busybox-sh4/musl/lib/musl-gcc.specs
sh4_UDEPS    := $(BUILD)/busybox-sh4/busybox
# Ours but the x86 benchmark and the UML- and x86-only tests.
ARCH_TESTS   := $(filter-out bench um_host_ops x86_flush_range,$(TESTS))
comma        := ,
space        := $(subst ,, )

arch-deps:
	@$(S)/deps.sh $(S)/packages-arch

# A changed plugin rebuilds musl, busybox and the tests, not the kernel
# (kbuild compares the CC line only): rm -rf build/sh4 for that.
$(SH_PLUGIN): $(S)/sh-treg-combine-off.cc | arch-deps
	@inc=$$($(sh4_CROSS)gcc -print-file-name=plugin)/include; [ -f $$inc/gcc-plugin.h ] || \
	    { echo "mmlab: error: no GCC plugin headers for $(sh4_CROSS)gcc ($$inc)" >&2; \
	      echo "mmlab:   fix: make arch-deps (gcc-12-plugin-dev-sh4-linux-gnu)" >&2; exit 2; }; \
	mkdir -p $(dir $@) && g++ -shared -fPIC -fno-rtti -O2 -Wall -I$$inc -o $@ $<

arch-verify: $(addprefix qemu-verify-,$(ARCHES))

define cross_rules
.PHONY: $(1)
$$(BUILD)/$(1)/.mmlab-fragment: qemu-config $(1)-config $$(SERIES_SUM)
	@CROSS_COMPILE=$$($(1)_CROSS) $$(S)/config.sh $$(KSRC) $$(BUILD)/$(1) $$($(1)_KARCH) $$($(1)_BASE) \
	    $$(ROOT)/qemu-config $$(ROOT)/$(1)-config
	@echo "mmlab: $$(BUILD)/$(1)/.config ready ($$($(1)_BASE) + qemu-config + $(1)-config, checked)"

# cross-busybox.sh decides whether to build (busybox.cflags), and leaves
# the file's time alone when it does not.
$$(BUILD)/busybox-$(1)/busybox: FORCE $$($(1)_DEPS)
	@CROSS_CFLAGS="$$($(1)_CFLAGS)" $$(S)/cross-busybox.sh $$($(1)_DEB) $$(BUILD)/busybox-$(1)

$$(BUILD)/tests-$(1)/%: tests/%.c tests/mmlab.h $$($(1)_UDEPS) | tree
	@mkdir -p $$(dir $$@)
	$$($(1)_CROSS)gcc $$($(1)_UCFLAGS) $$(TEST_CFLAGS) -o $$@ $$<

$$(BUILD)/initramfs-$(1).cpio: $$(ROOTFS_IN) $$(ARCH_TESTS:%=$$(BUILD)/tests-$(1)/%) $$(S)/mkinitramfs.sh \
	    $$(BUILD)/busybox-$(1)/busybox $$(SERIES_FUNCS)
	@CROSS_BUSYBOX=$$(BUILD)/busybox-$(1)/busybox SERIES_FUNCTIONS=$$(SERIES_FUNCS) $$(S)/mkrootfs.sh $$(BUILD)/stage-$(1) none none \
	    $$(ARCH_TESTS:%=$$(BUILD)/tests-$(1)/%)
	@$$(S)/mkinitramfs.sh $$(BUILD)/stage-$(1) $$@ $$(KSRC) $$(BUILD)/tools

$(1): arch-deps series $$(BUILD)/$(1)/.mmlab-fragment $$($(1)_DEPS)
	@CROSS_COMPILE=$$($(1)_CROSS) $$(S)/kbuild.py $(1) $$(KSRC) $$(BUILD)/$(1) $$($(1)_KARCH) \
	    "$$(strip $$(call kcc_cross,$$($(1)_CROSS)) $$($(1)_CFLAGS))" $$(JOBS) $$(notdir $$($(1)_IMAGE))
	@$$(MAKE) -s $$(BUILD)/initramfs-$(1).cpio
endef

define verify_rules
.PHONY: qemu-verify-$(1)
qemu-verify-$(1): $(1)
	@$$(S)/boot.py qemu --arch $(1) --kernel $$(BUILD)/$(1)/$$($(1)_IMAGE) --initrd $$(BUILD)/initramfs-$(1).cpio \
	    --ksrc $$(KSRC) --logdir $$(LOGS) --name qemu-verify-$(1) $$(if $$(QEMU_TIMEOUT),--timeout $$(QEMU_TIMEOUT)) \
	    $$(if $$(filter 1,$$(V)),--verbose) --mode $$(if $$(T),$$(T),kunit$$(comma)$$(subst $$(space),$$(comma),$$(ARCH_TESTS)))
endef
$(foreach a,$(ARCHES),$(eval $(call cross_rules,$(a))))
$(foreach a,$(ARCHES),$(eval $(call verify_rules,$(a))))

# The edit -> test loop: KUnit and the quick guest tests (T= picks others).
test-uml: uml rootfs
	@$(BOOT) --name test-uml --timeout $(TIMEOUT) --mode $(if $(T),$(T),quick)

# The whole UML suite, as make test runs it: with the vm selftests, the
# benchmark and a 20 s soak.
test-uml-all: uml rootfs
	@$(BOOT) --name test-uml-all --timeout $(TIMEOUT) --mode test

run:
	@$(LOCKED) $(MAKE) -s uml rootfs
	@$(BOOT) --interactive --mode shell

# UML under gdb, booted into WORKLOAD (a test binary, e.g. munmap) or a shell.
gdb:
	@$(LOCKED) $(MAKE) -s uml rootfs
	@echo "mmlab: UML under gdb (mmlab.mode=$(or $(WORKLOAD),shell)); 'run' boots, Ctrl-C stops, mm-break gather COMM"
	@gdb -iex "add-auto-load-safe-path $(ROOT)" -x gdb-scripts/uml.gdb \
	    --args ./linux ubd0r=build/rootfs.img mem=384M mmlab.mode=$(or $(WORKLOAD),shell)

# The vm selftests alone, on UML and on x86 (both are also part of make test).
kselftest: deps
	@$(S)/test-all.sh $(LOGS) kselftest-uml kselftest-x86

kselftest-uml: uml rootfs
	@$(BOOT) --name kselftest-uml --timeout $(TIMEOUT) --mode kselftest

kselftest-x86: x86 initramfs
	@$(QBOOT) --name kselftest-x86 --mode kselftest

# Stress under the debug options (rootfs/bin/mmlab-soak) on the sanitizer
# kernels: KASAN on UML and x86_64, KCSAN on x86_64 (3 vCPUs). make soak
# builds the three kernels in turn, then boots the three guests side by side
# (each is one host thread). make test's 20 s soak runs on the plain kernels.
SOAK_SECONDS ?= 180
SOAK_ARGS = --append mmlab.soak=$(SOAK_SECONDS) $(if $(SEED),--append mmlab.seed=$(SEED))
SOAK_PARTS := soak-uml soak-x86 soak-kcsan
soak: deps
	@$(MAKE) -s uml-kasan x86-kasan x86-kcsan rootfs initramfs
	@MMLAB_SOAK_BUILT=1 $(S)/test-all.sh --parallel $(LOGS) $(SOAK_PARTS)

$(UML_KASAN_O)/.mmlab-fragment: uml-config kasan-config $(SERIES_SUM)
	@$(S)/config.sh $(KSRC) $(UML_KASAN_O) um defconfig $(ROOT)/uml-config $(ROOT)/kasan-config
$(X86_KASAN_O)/.mmlab-fragment: qemu-config kasan-config $(SERIES_SUM)
	@$(S)/config.sh $(KSRC) $(X86_KASAN_O) x86_64 "x86_64_defconfig kvm_guest.config" \
	    $(ROOT)/qemu-config $(ROOT)/kasan-config
$(X86_KCSAN_O)/.mmlab-fragment: qemu-config kcsan-config $(SERIES_SUM)
	@$(S)/config.sh $(KSRC) $(X86_KCSAN_O) x86_64 "x86_64_defconfig kvm_guest.config" \
	    $(ROOT)/qemu-config $(ROOT)/kcsan-config

uml-kasan: series $(UML_KASAN_O)/.mmlab-fragment
	$(call kbuild,UML+KASAN,$(UML_KASAN_O),um,linux)
x86-kasan: series $(X86_KASAN_O)/.mmlab-fragment
	$(call kbuild,x86_64+KASAN,$(X86_KASAN_O),x86_64,bzImage)
x86-kcsan: series $(X86_KCSAN_O)/.mmlab-fragment
	$(call kbuild,x86_64+KCSAN,$(X86_KCSAN_O),x86_64,bzImage)

# Each part alone builds what it boots; under make soak they are built.
soak-uml: $(if $(MMLAB_SOAK_BUILT),,uml-kasan rootfs)
	@$(UBOOT) --kernel $(UML_KASAN_O)/linux --name soak-uml --timeout $$(( $(SOAK_SECONDS) + 300 )) \
	    --mode soak $(SOAK_ARGS)

soak-x86: $(if $(MMLAB_SOAK_BUILT),,x86-kasan initramfs)
	@$(QBOOT_ANY) --kernel $(X86_KASAN_O)/arch/x86/boot/bzImage --name soak-x86 \
	    --timeout $$(( $(SOAK_SECONDS) + 600 )) --mode soak $(SOAK_ARGS)

soak-kcsan: $(if $(MMLAB_SOAK_BUILT),,x86-kcsan initramfs)
	@$(QBOOT_ANY) --kernel $(X86_KCSAN_O)/arch/x86/boot/bzImage --name soak-kcsan \
	    --timeout $$(( $(SOAK_SECONDS) + 600 )) --mode soak $(SOAK_ARGS)

# Stock vs patched x86_64 in QEMU, alternately (scripts/bench.sh; BOOTS=5).
bench: deps series initramfs
	@JOBS=$(JOBS) KCC="$(KCC)" $(S)/bench.sh $(KSRC) $(GITDIR) $(BUILD) $(ROOT)

test-host: uml rootfs
	@tests/host/run.sh $(LOGS)

# lava-check runs the quick suite here: qemu-verify has just run the whole
# x86_64 suite, and the LAVA run shows that LAVA runs ours and agrees.
# BUILD:PART waits for BUILD, which a background make builds meanwhile
# (scripts/test-all.sh): each kernel builds while the guest before it runs.
# *:PART waits for all of them: test-host times guest timeouts, which a
# build beside it skews; the mutants and the bisect edit build/src.
# Every package is installed first: apt beside a background build's apt
# would find dpkg's lock taken.
TEST_PARTS := uml,rootfs:test-uml-all fresh-check x86,initramfs:qemu-verify x86,initramfs:lava-check \
	$(foreach a,$(ARCHES),$(a):qemu-verify-$(a)) *:test-host *:mutate-quick *:bisect-check kcidb
test: deps arch-deps
	@$(S)/deps.sh $(S)/packages-lava
	@set -f; LAVA_T=quick $(S)/test-all.sh $(LOGS) $(TEST_PARTS)

# Mutation testing (scripts/mutate.py, tests/mutants/): M=a,b runs those.
# make test runs MUTATE_QUICK, so the harness itself stays tested.
MUTATE_QUICK ?= 09-,22-
mutate: series
	@$(S)/mutate.py $(ROOT) $(KSRC) $(GITDIR) $(LOGS) $(M)

mutate-quick: series
	@SUMMARY=mutate-quick $(S)/mutate.py $(ROOT) $(KSRC) $(GITDIR) $(LOGS) $(MUTATE_QUICK)

# Results beyond this machine: KCIDB, a bisect over the series, a bundle.
kcidb: deps
	@$(S)/kcidb.py $(ROOT) $(KSRC) $(LOGS) $(LOGS)/kcidb.json
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
	@T="$(T)" BISECT_ON="$(BISECT_ON)" $(S)/bisect.sh $(ROOT) $(KSRC) $(GITDIR) $(ROOT)/patches "$(GOOD)" "$(BAD)"

bisect-check: series
	@$(S)/bisect-check.sh $(ROOT) $(KSRC) $(GITDIR) $(BUILD) $(LOGS)

# The x86_64 suite as a LAVA job; lava-check runs it with Debian's lava-run
# (root; it installs scripts/packages-lava first). LAVA_T= a smaller suite.
LAVA_T ?= test
lava-job: deps x86 initramfs
	@$(S)/lava.py job $(ROOT) $(BUILD)/lava --mode $(LAVA_T)

lava-check: deps x86 initramfs
	@$(S)/deps.sh $(S)/packages-lava
	@$(S)/lava.py check $(ROOT) $(KSRC) $(BUILD)/lava $(LOGS) --mode $(LAVA_T)

bundle: deps
	@RUN="$(RUN)" $(S)/bundle.sh $(ROOT) $(LOGS) $(BUILD)/bundles

# The README's opening commands on a fresh Debian 12 root (mmdebstrap).
fresh-check: deps
	@$(S)/fresh-check.sh $(ROOT) $(BUILD) $(LOGS)

doctor:
	@$(S)/doctor.sh $(KSRC)

clean:
	rm -rf $(UML_O) $(X86_O) $(UML_KASAN_O) $(X86_KASAN_O) $(X86_KCSAN_O) \
	       $(BUILD)/x86-stock $(BUILD)/x86-off $(BUILD)/tests $(BUILD)/stage $(BUILD)/rootfs.img \
	       $(BUILD)/initramfs.cpio $(BUILD)/tools $(LOGS) linux rootfs.img linux-gdb.py \
	       $(foreach a,$(ARCHES),$(BUILD)/$(a) $(BUILD)/tests-$(a) $(BUILD)/stage-$(a) \
	           $(BUILD)/initramfs-$(a).cpio $(BUILD)/busybox-$(a))

distclean:
	rm -rf $(BUILD) linux rootfs.img linux-gdb.py
endif
