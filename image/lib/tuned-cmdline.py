#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-3-Clause
"""Print the kernel command line words a tuned profile's [bootloader]
cmdline* options expand to, the way tuned itself expands them (its own
profile loader and variable functions), without applying anything.

    tuned-cmdline.py PROFILE        (run inside the image's rootfs: chroot)

tuned only writes these words into GRUB; an extlinux image must carry them
on its APPEND line itself, or `tuned-adm verify` fails on [bootloader].
cpu-list functions read this machine's online cpus: run it where the
profile's cpus exist or the result is only valid for lists that do not
depend on them (image/build checks the housekeeping mask it gets).
"""
import sys

import tuned.consts as consts
from tuned.profiles.factory import Factory
from tuned.profiles.loader import Loader
from tuned.profiles.locator import Locator
from tuned.profiles.merger import Merger
from tuned.profiles.variables import Variables
from tuned.utils.global_config import GlobalConfig


def main():
    variables = Variables()
    loader = Loader(Locator(consts.LOAD_DIRECTORIES), Factory(), Merger(), GlobalConfig(), variables)
    profile = loader.load([sys.argv[1]])
    words = []
    unit = profile.units.get("bootloader")
    for key, value in (unit.options.items() if unit else []):
        if key.startswith("cmdline"):
            for w in variables.expand(value.lstrip("+")).split():
                if w not in words:
                    words.append(w)
    print(" ".join(words))


if __name__ == "__main__":
    main()
