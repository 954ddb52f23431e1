"""Raw protobuf wire encoding for fields a schema does not know.

Design: both roles of the conformance runner put bytes on the wire that
protobuf's own encoder will not write: the supervisor-under-test steps
(steps.py) append unknown fields to requests, and the fake supervisor
(fake.py) appends them to replies or pads an oversize reply. Both describe
such a field the same way, so the encoding lives here once:

  {"number": N, "varint": V}       a varint field (wire type 0)
  {"number": N, "hex": H}          a length-delimited field (wire type 2)
                                   holding the bytes H
  {"number": N, "size": S, "fill": B}  a length-delimited field holding S
                                   bytes of value B (default 0)

This module has no protobuf dependency and no state.
"""


def varint(n):
    """The base-128 varint bytes of n, taken as an unsigned 64-bit value
    (so a negative n encodes in ten bytes, as protobuf does)."""
    out = bytearray()
    n &= (1 << 64) - 1
    while True:
        b = n & 0x7F
        n >>= 7
        if n:
            out.append(b | 0x80)
        else:
            out.append(b)
            return bytes(out)


def raw_field(f):
    """The wire bytes (tag and value) of one field described as above."""
    num = int(f["number"])
    if "varint" in f:
        return varint(num << 3 | 0) + varint(int(f["varint"]))
    data = bytes.fromhex(f.get("hex", ""))
    if "size" in f:
        data = bytes([int(f.get("fill", 0))]) * int(f["size"])
    return varint(num << 3 | 2) + varint(len(data)) + data
