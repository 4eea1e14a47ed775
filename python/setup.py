"""Packaging beyond pyproject.toml.

- strata._fast, a small C extension (strata/_fast.c): the copy of a lent cache file with its
  CRCs checked in the same pass, which Python cannot do at the Go client's cost. Built with
  the stable ABI (one wheel for Python 3.11 and later); where it cannot be built, the package
  reads through the agent instead (slower, nothing else differs).
- A wheel that bundles the strata binary (make python-wheel copies bin/strata to
  strata/_bin/strata first) is tagged for this platform, since it holds a program built for it.
"""


from setuptools import Extension, setup
from setuptools.command.bdist_wheel import bdist_wheel


class PlatformWheel(bdist_wheel):
    def finalize_options(self) -> None:
        super().finalize_options()
        self.root_is_pure = False
        self.py_limited_api = "cp311"

    def get_tag(self) -> tuple[str, str, str]:
        _, _, plat = super().get_tag()
        return ("cp311", "abi3", plat)


setup(
    cmdclass={"bdist_wheel": PlatformWheel},
    ext_modules=[Extension("strata._fast", ["strata/_fast.c"], py_limited_api=True, optional=True,
                           define_macros=[("Py_LIMITED_API", "0x030B0000")], extra_compile_args=["-O2"])],
)
