// A GCC plugin for Debian 12's sh4 cross compiler (GCC 12.2): it turns off
// the SH back end's sh_treg_combine passes, which make wrong code there.
//
// Seen in our 6.1 tree: in cgroup_init_early() the pass deleted the
// "tst r7,r7" of WARN(!ss->css_alloc ...) although its trace found no store
// of the T bit (-fdump-rtl-all: "set of ccreg not found", then "removing test
// insn before cbranch"). The bt.s after it then branches on the T bit that
// the call before it left, and the kernel warns and faults before its first
// console line. The zImage decompressor fails the same way.
//
// The cause, read in the compiler: sh_treg_combine.cc declares the back
// end's t_reg_operand() and negt_reg_operand() as returning int, but they
// return bool (the generated tm-preds.h says so, and C++ mangling ignores
// the return type). Debian's cc1 sets only the low byte of
// negt_reg_operand()'s result, so the pass can take a plain load for a
// store of the inverted T bit and drop the test it needs. GCC 13 fixed it
// (2022-11-17: the pass includes tm-preds.h instead of declaring them), so
// the plugin is used only where the cross compiler is GCC 12 (machines.mk:
// sh4.plugin_gcc; scripts/plugin.sh).
//
// The passes only merge comparisons: turned off, they cost a few
// instructions and change no meaning.
//
// make sh4 builds the kernel, musl, busybox and our tests with
// -fplugin=build/KVER/tools/sh-treg-combine-off.so.
#include "gcc-plugin.h"
#include "plugin-version.h"
#include "tree-pass.h"

int plugin_is_GPL_compatible;

// PLUGIN_OVERRIDE_GATE runs for every pass with the pass's own gate result;
// current_pass is the pass in question.
static void treg_combine_off(void *gate, void *)
{
	if (current_pass && current_pass->name &&
	    !strncmp(current_pass->name, "sh_treg_combine", 15))
		*(bool *)gate = false;
}

int plugin_init(struct plugin_name_args *info, struct plugin_gcc_version *version)
{
	if (!plugin_default_version_check(version, &gcc_version))
		return 1;
	register_callback(info->base_name, PLUGIN_OVERRIDE_GATE, treg_combine_off, NULL);
	return 0;
}
