# The kernel trees: one block per Debian linux-source-X.Y the project has a
# series for. Read like machines.mk (the Makefile includes it; scripts/mmlab/
# conf.py reads NAME.FIELD = VALUE lines). make picks one with KVER= (else
# the version of KSRC=, else the tree of this Debian release's `linux-source`:
# the block whose `default` names the release); each builds into build/KVER.
#
#   package     Debian's package of the source
#   tarball     what the package installs
#   version     the tree's VERSION.PATCHLEVEL (make tree checks it)
#   sublevel    the SUBLEVEL this series was made on and tested with
#   series      the quilt series (its directory holds its patches)
#   stable      the stable branch upstream keeps it in (KCIDB's checkout)
#   releases    the Debian releases whose apt offers the package
#   default     the releases whose unversioned linux-source depends on it
#               (make doctor checks this against apt)
#   kselftests  the tree's own mm selftests the guests run (tools/testing/
#               selftests/vm in 6.1, mm since 6.3), with those left out
#   mutants     make mutate's mutants of this tree's code (a mutant keeps its
#               number on every tree: the same bug, ported)
#   kcsan_known the KCSAN reports in this tree's stock code reviewed as not the
#               series' (the guest's /etc/mmlab/kcsan-known, docs/soak.md)
trees = 6.1 6.12

6.1.package = linux-source-6.1
6.1.tarball = /usr/src/linux-source-6.1.tar.xz
6.1.version = 6.1
6.1.sublevel = 192
6.1.series = patches/6.1/series
6.1.stable = linux-6.1.y
6.1.releases = bookworm
6.1.default = bookworm
6.1.kselftests = tests/kselftest-vm.list
6.1.mutants = tests/mutants/6.1
6.1.kcsan_known = tests/kcsan-known/6.1

6.12.package = linux-source-6.12
6.12.tarball = /usr/src/linux-source-6.12.tar.xz
6.12.version = 6.12
6.12.sublevel = 118
6.12.series = patches/6.12/series
6.12.stable = linux-6.12.y
6.12.releases = bookworm trixie
6.12.default = trixie
6.12.kselftests = tests/kselftest-mm.list
6.12.mutants = tests/mutants/6.12
6.12.kcsan_known = tests/kcsan-known/6.12

tree_fields = package tarball version sublevel series stable releases default kselftests mutants kcsan_known
