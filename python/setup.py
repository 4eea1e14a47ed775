"""Packaging beyond pyproject.toml: a wheel that bundles the strata binary (make python-wheel
copies bin/strata to strata/_bin/strata first) is tagged for this platform, since it holds a
program built for it; without it the wheel is pure Python and finds strata on PATH."""

from pathlib import Path

from setuptools import setup
from setuptools.command.bdist_wheel import bdist_wheel

BUNDLED = (Path(__file__).parent / "strata" / "_bin" / "strata").is_file()


class PlatformWheel(bdist_wheel):
    def finalize_options(self) -> None:
        super().finalize_options()
        self.root_is_pure = not BUNDLED

    def get_tag(self) -> tuple[str, str, str]:
        python, abi, plat = super().get_tag()
        return ("py3", "none", plat) if BUNDLED else (python, abi, plat)


setup(cmdclass={"bdist_wheel": PlatformWheel})
