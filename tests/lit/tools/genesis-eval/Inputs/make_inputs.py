# Writes the .npy and .safetensors inputs of the genesis-eval tests into argv[1].
import json
import os
import struct
import sys

import numpy as np

out = sys.argv[1]
os.makedirs(out, exist_ok=True)
a = np.arange(6, dtype=np.float32).reshape(2, 3)
b = np.array([[1, 2], [3, 4], [5, 6]], dtype=np.float32)
np.save(os.path.join(out, "a.npy"), a)
np.save(os.path.join(out, "b.npy"), b)
np.save(os.path.join(out, "b_f64.npy"), b.astype(np.float64))
np.save(os.path.join(out, "b_wrong_shape.npy"), b.reshape(2, 3))
np.save(os.path.join(out, "one.npy"), np.ones(1, dtype=np.float32))
with open(os.path.join(out, "b.npy"), "rb") as f:
    data = f.read()
with open(os.path.join(out, "b_truncated.npy"), "wb") as f:
    f.write(data[:-5])

def safetensors(path, tensors):
    header, blobs, offset = {}, [], 0
    for name, array in tensors.items():
        raw = array.tobytes()
        header[name] = {"dtype": "F32", "shape": list(array.shape),
                        "data_offsets": [offset, offset + len(raw)]}
        blobs.append(raw)
        offset += len(raw)
    text = json.dumps(header).encode()
    text += b" " * (-len(text) % 8)
    with open(path, "wb") as f:
        f.write(struct.pack("<Q", len(text)) + text + b"".join(blobs))

safetensors(os.path.join(out, "ab.safetensors"), {"a": a, "b": b})
safetensors(os.path.join(out, "unknown.safetensors"), {"c": a})
