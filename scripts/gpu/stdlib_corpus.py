"""The GPU benchmarks' token stream: the bytes of this machine's Python
standard library sources (ids < 256 of GPT-2's 50257), in a fixed order."""
import os
import sysconfig

import numpy as np


def stdlib_tokens(limit=8 << 20):
    root = sysconfig.get_paths()["stdlib"]
    data = bytearray()
    for directory, _, files in sorted(os.walk(root)):
        for name in sorted(files):
            if name.endswith(".py") and len(data) < limit:
                with open(os.path.join(directory, name), "rb") as f:
                    data += f.read()
    return np.frombuffer(bytes(data), dtype=np.uint8).astype(np.int64)
