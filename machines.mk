# The machines: one block per kernel built from the tree (in build/NAME, its
# O= directory) and the guest that boots it. The Makefile includes this file;
# scripts/mmlab/conf.py reads it (NAME.FIELD = VALUE lines, nothing else);
# tests/host checks that every block is complete and that both read the same.
# Adding a machine: a block here, its config fragment beside qemu-config,
# and its name in `machines` (README, "Adding a machine").
#
#   from        a block whose fields this one takes where it gives none
#   arch        the kernel's ARCH
#   kcidb_arch  KCIDB's name for the architecture
#   cross       CROSS_COMPILE (empty: the host's gcc)
#   base        the tree's config target(s) under the fragments
#   fragments   config fragments, merged in this order
#   image       the kernel image, in build/NAME
#   targets     what kbuild builds
#   variant     KCIDB's variant: patched, options-off, stock, kasan, kcsan
#   built_by    the make target that builds it (default: make NAME)
#   link        a name at the top of the repository linked to its image
#               (./linux), with the kernel's gdb helpers set up beside it
#   note        said of the build in KCIDB's config_name
#   root        rootfs: build/rootfs.img (UML); initramfs: build/initramfs.cpio
#               (the host's programs); own: build/initramfs-NAME.cpio, the
#               tests cross-compiled for NAME and Debian's busybox for deb
#   deb         Debian's name of the architecture (busybox-static:deb)
#   libc        glibc, or musl (built with busybox from Debian's sources)
#   plugin      a GCC plugin from scripts/PLUGIN.cc everything is compiled with
#   plugin_gcc  the cross compiler's major versions that need it (empty: all);
#               with another, nothing is (scripts/plugin.sh)
#   boot        uml, or qemu
#   qemu        QEMU's program
#   board       its machine and CPU arguments (given under TCG)
#   console     the kernel's console device
#   accel       probe: KVM when a short boot prints, else TCG; tcg: TCG only
#   nodes       NUMA nodes (1: none)
#   cpus        the most vCPUs the board has (empty: no limit); a board with
#               cpus has its mem fixed too
#   mem         the guest's memory (the default; fixed where cpus is given)
#   timeout     seconds for a whole run (under TCG on a qemu machine)
#   timeout_kvm seconds for a whole run under KVM
#   test_timeout  each guest test's limit under TCG (mmlab.test_timeout=)
#   mutate_timeout  seconds for a mutant's run (make mutate)
#   verify      the make target that boots its suite
#   packages    the Debian packages it needs beyond scripts/packages
machines = uml x86 arm64 arm s390x sh4 uml-kasan x86-kasan x86-kcsan x86-off x86-stock

uml.arch = um
uml.kcidb_arch = um
uml.cross =
uml.base = defconfig
uml.fragments = uml-config
uml.image = linux
uml.targets = linux scripts_gdb
uml.variant = patched
uml.link = linux
uml.root = rootfs
uml.deb = amd64
uml.libc = glibc
uml.boot = uml
uml.mem = 384M
uml.timeout = 300
uml.mutate_timeout = 120
uml.verify = test-uml
uml.packages =

x86.arch = x86_64
x86.kcidb_arch = x86_64
x86.cross =
x86.base = x86_64_defconfig kvm_guest.config
x86.fragments = qemu-config
x86.image = arch/x86/boot/bzImage
x86.targets = bzImage scripts_gdb
x86.variant = patched
x86.root = initramfs
x86.deb = amd64
x86.libc = glibc
x86.boot = qemu
x86.qemu = qemu-system-x86_64
x86.board = -cpu max
x86.console = ttyS0
x86.accel = probe
x86.nodes = 2
x86.mem = 2G
x86.timeout = 1200
x86.timeout_kvm = 300
x86.test_timeout = 300
x86.mutate_timeout = 900
x86.verify = qemu-verify
x86.packages = qemu-system-x86

# virt's default CPU is a 32-bit Cortex-A15: max has FEAT_TLBIRANGE (range
# TLBIs, as 6.1 uses them); without pauth-impdef QEMU 7.2 spends much of its
# time in pointer authentication.
arm64.from = x86
arm64.arch = arm64
arm64.kcidb_arch = arm64
arm64.cross = aarch64-linux-gnu-
arm64.base = alldefconfig
arm64.fragments = qemu-config arm64-config
arm64.image = arch/arm64/boot/Image
arm64.targets = Image
arm64.root = own
arm64.deb = arm64
arm64.qemu = qemu-system-aarch64
arm64.board = -M virt -cpu max,pauth-impdef=on
arm64.console = ttyAMA0
arm64.accel = tcg
arm64.verify = qemu-verify-arm64
arm64.packages = gcc-aarch64-linux-gnu libc6-dev-arm64-cross qemu-system-arm

# The Cortex-A15 has LPAE; 32-bit arm Linux has no NUMA.
arm.from = arm64
arm.arch = arm
arm.kcidb_arch = arm
arm.cross = arm-linux-gnueabi-
arm.fragments = qemu-config arm-config
arm.image = arch/arm/boot/zImage
arm.targets = zImage
arm.deb = armel
arm.qemu = qemu-system-arm
arm.board = -M virt -cpu cortex-a15
arm.nodes = 1
arm.verify = qemu-verify-arm
arm.packages = gcc-arm-linux-gnueabi libc6-dev-armel-cross qemu-system-arm

# QEMU's s390x machine describes no NUMA topology: one node.
s390x.from = arm64
s390x.arch = s390
s390x.kcidb_arch = s390x
s390x.cross = s390x-linux-gnu-
s390x.fragments = qemu-config s390x-config
s390x.image = arch/s390/boot/bzImage
s390x.targets = bzImage
s390x.deb = s390x
s390x.qemu = qemu-system-s390x
s390x.board = -M s390-ccw-virtio -cpu max
s390x.console = ttysclp0
s390x.nodes = 1
s390x.verify = qemu-verify-s390x
s390x.packages = gcc-s390x-linux-gnu libc6-dev-s390x-cross qemu-system-misc

# The R2D-Plus: one SH7751R, 64 MiB, the console on the second SCIF.
# Debian 12's gcc-sh4 (12.2) makes wrong code in its sh_treg_combine passes:
# everything for sh4 is compiled with a plugin that turns them off (g++ and
# GCC 12's plugin headers build it). GCC 13 fixed the passes, so Debian
# 13's gcc-sh4 (14.2) needs no plugin and gets none (plugin_gcc). Debian
# 12's sh4 glibc has the wrong code too; Debian 13's does not, but neither
# release has sh4 binaries (a ports architecture), so busybox is built from
# Debian's source either way, and with it musl (cross-busybox.sh; dpkg-dev,
# bzip2): one way to build sh4's programs on both releases.
sh4.from = arm64
sh4.arch = sh
sh4.kcidb_arch = sh4
sh4.cross = sh4-linux-gnu-
sh4.base = rts7751r2dplus_defconfig
sh4.fragments = qemu-config sh4-config
sh4.image = arch/sh/boot/zImage
sh4.targets = zImage
sh4.deb = sh4
sh4.libc = musl
sh4.plugin = sh-treg-combine-off
sh4.plugin_gcc = 12
sh4.qemu = qemu-system-sh4
sh4.board = -M r2d -serial null -serial mon:stdio
sh4.console = ttySC1
sh4.nodes = 1
sh4.cpus = 1
sh4.mem = 64M
sh4.verify = qemu-verify-sh4
sh4.packages = gcc-sh4-linux-gnu libc6-dev-sh4-cross qemu-system-misc dpkg-dev bzip2 file g++ gcc-12-plugin-dev-sh4-linux-gnu

# make soak's sanitizer kernels, from the same tree.
uml-kasan.from = uml
uml-kasan.link =
uml-kasan.fragments = uml-config kasan-config
uml-kasan.targets = linux
uml-kasan.variant = kasan
uml-kasan.verify = soak-uml

x86-kasan.from = x86
x86-kasan.fragments = qemu-config kasan-config
x86-kasan.targets = bzImage
x86-kasan.variant = kasan
x86-kasan.verify = soak-x86

x86-kcsan.from = x86
x86-kcsan.fragments = qemu-config kcsan-config
x86-kcsan.targets = bzImage
x86-kcsan.variant = kcsan
x86-kcsan.verify = soak-kcsan

# make bench's baselines (scripts/bench.sh builds them): the series with its
# own options off, and the pristine tree. Their fragment is qemu-config
# without the series' options (build/bench/qemu-config.stock).
x86-off.from = x86
x86-off.targets = bzImage
x86-off.variant = options-off
x86-off.built_by = bench
x86-off.note = without the series' options
x86-off.verify = bench

x86-stock.from = x86-off
x86-stock.variant = stock
x86-stock.note = without the series' options, the pristine tree (no patch)

# Every field above; a block must give (or take from its `from`) each of
# `required`, and a qemu machine each of `required_qemu`.
fields = from arch kcidb_arch cross base fragments image targets variant built_by link note \
	root deb libc plugin plugin_gcc boot qemu board console accel nodes cpus mem timeout timeout_kvm \
	test_timeout mutate_timeout verify packages
required = arch kcidb_arch base fragments image targets variant root deb libc boot mem \
	timeout mutate_timeout verify
required_qemu = qemu board console accel nodes timeout_kvm test_timeout
