# lit configuration for tilejit's golden tests (tests/lit/<stage>/).
import os
import lit.formats

config.name = "tilejit"
config.test_format = lit.formats.ShTest(execute_external=False)
config.suffixes = [".tile", ".tir"]
config.excludes = ["Inputs"]
config.test_source_root = os.path.dirname(__file__)
config.test_exec_root = os.path.join(os.path.dirname(config.tilejit_bin_dir), "tests", "lit-out")
config.environment["PATH"] = os.pathsep.join(
    [config.tilejit_bin_dir, config.llvm_tools_dir, config.environment.get("PATH", os.environ.get("PATH", ""))])
# A sanitizer build's libtilejit.so needs the sanitizer's runtime, which an
# uninstrumented interpreter (python3 loading it) does not have.
if config.tilejit_sanitize:
    config.available_features.add("sanitizer")
# Keep dumps and caches of lit runs out of the user's home.
config.environment["TILEJIT_CACHE"] = "off"
config.substitutions.append(("%tile-opt", os.path.join(config.tilejit_bin_dir, "tile-opt")))
config.substitutions.append(("%tilejit", os.path.join(config.tilejit_bin_dir, "tilejit")))
