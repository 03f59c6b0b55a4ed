"""What pyproject.toml cannot say: discover lakeclone's subpackages *and* map the
top-level magics/ folder to lakeclone.magics (a static ``packages`` list would
have to name every subpackage by hand)."""

from setuptools import find_packages, setup

setup(packages=[*find_packages(include=["lakeclone", "lakeclone.*"]), "lakeclone.magics"])
