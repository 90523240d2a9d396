"""Builds the extension autocat._autocat through the project's CMake
(python/CMakeLists.txt) for the interpreter running pip, and packages it with
python/autocat. AUTOCAT_CMAKE_BUILD_DIR=DIR takes the extension from a build
directory already configured (for this Python) instead of configuring one."""

import os
import pathlib
import re
import shutil
import subprocess
import sys
import sysconfig

from setuptools import Extension, setup
from setuptools.command.build_ext import build_ext

ROOT = pathlib.Path(__file__).resolve().parent


def project_version():
    cmake_lists = (ROOT / "CMakeLists.txt").read_text(encoding="utf-8")
    return re.search(r"project\(autocat VERSION ([0-9.]+)", cmake_lists).group(1)


def build(command):
    """Runs the C++ build. pip shows a backend's output only with -v, so a
    build of several minutes would look hung: its progress ("[12/80]" lines
    from Ninja) is also written to the terminal, when there is one."""
    try:
        terminal = open("/dev/tty", "w", encoding="utf-8")
    except OSError:
        terminal = None
    shown = False
    with subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                          text=True, errors="replace") as process:
        for line in process.stdout:
            sys.stdout.write(line)
            step = re.match(r"\[(\d+)/(\d+)\]", line)
            if terminal and step:
                done, total = int(step.group(1)), int(step.group(2))
                terminal.write(f"\rautocat: building the C++ part {done}/{total} "
                               f"({100 * done // total}%)")
                terminal.flush()
                shown = True
    if terminal:
        if shown:
            terminal.write("\n")
        terminal.close()
    if process.returncode != 0:
        raise subprocess.CalledProcessError(process.returncode, command)


class CMakeBuild(build_ext):
    def build_extension(self, ext):
        build_dir = os.environ.get("AUTOCAT_CMAKE_BUILD_DIR")
        if build_dir:
            build_dir = pathlib.Path(build_dir).resolve()
            if not (build_dir / "CMakeCache.txt").exists():
                sys.exit(f"setup.py: AUTOCAT_CMAKE_BUILD_DIR={build_dir} is not a configured "
                         "CMake build directory: configure it, or unset the variable")
        else:
            # A Release build of the module alone: no tests, examples or benchmarks.
            build_dir = pathlib.Path(self.build_temp).resolve() / "cmake"
            generator = ["-G", "Ninja"] if shutil.which("ninja") else []
            build(["cmake", "-S", str(ROOT), "-B", str(build_dir), *generator,
                   "-DCMAKE_BUILD_TYPE=Release", "-DAUTOCAT_BUILD_TESTS=OFF",
                   "-DAUTOCAT_BUILD_EXAMPLES=OFF", "-DAUTOCAT_BUILD_BENCH=OFF",
                   "-DAUTOCAT_BUILD_PYTHON=ON", f"-DPython_EXECUTABLE={sys.executable}"])
        build(["cmake", "--build", str(build_dir), "--target", "autocat_python", "autocat",
               "-j", str(os.cpu_count() or 1)])
        built = build_dir / "python" / "autocat" / ("_autocat" + sysconfig.get_config_var("EXT_SUFFIX"))
        if not built.exists():
            sys.exit(f"setup.py: {built} was not built: the build directory {build_dir} is "
                     f"configured for another Python than {sys.executable}")
        target = pathlib.Path(self.get_ext_fullpath(ext.name))
        target.parent.mkdir(parents=True, exist_ok=True)
        shutil.copy2(built, target)
        # The command-line tool (linked statically against autocat, like the
        # extension) goes into the package; the `autocat` console script runs it.
        command = build_dir / "indexer" / "autocat"
        if not command.exists():
            sys.exit(f"setup.py: {command} was not built in {build_dir}")
        (target.parent / "bin").mkdir(exist_ok=True)
        shutil.copy2(command, target.parent / "bin" / "autocat")


setup(
    version=project_version(),
    packages=["autocat"],
    package_dir={"": "python"},
    ext_modules=[Extension("autocat._autocat", sources=[])],
    cmdclass={"build_ext": CMakeBuild},
    # Out of the source tree's way, under a name .gitignore covers (build*/).
    options={"build": {"build_base": "build-python"}, "egg_info": {"egg_base": "build-python"}},
    zip_safe=False,
)
