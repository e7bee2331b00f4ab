# The kernel trees: one block per Debian linux-source-X.Y the project has a
# series for. Read like machines.mk (the Makefile includes it; scripts/mmlab/
# conf.py reads NAME.FIELD = VALUE lines).
#
#   package     Debian's package of the source
#   tarball     what the package installs
#   version     the tree's VERSION.PATCHLEVEL (make tree checks it)
#   sublevel    the SUBLEVEL this series was made on and tested with
#   series      the quilt series (patches/ holds its patches)
#   stable      the stable branch upstream keeps it in (KCIDB's checkout)
#   releases    the Debian releases whose apt offers the package
trees = 6.1

6.1.package = linux-source-6.1
6.1.tarball = /usr/src/linux-source-6.1.tar.xz
6.1.version = 6.1
6.1.sublevel = 192
6.1.series = patches/series
6.1.stable = linux-6.1.y
6.1.releases = bookworm

tree_fields = package tarball version sublevel series stable releases
