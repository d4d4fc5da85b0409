"""The bytes of Java Paimon's RoaringBitmap64: ``Roaring64Bitmap.serialize`` of RoaringBitmap
1.2.1, and the union FieldRoaringBitmap64Agg computes on them.

Java's 64-bit bitmap is not the portable format (pyroaring, CRoaring): it writes its in-memory
layout, an adaptive radix tree (ART) over the 48-bit high parts and a two-level array of 16-bit
containers (``HighLowContainer``, ``Art``, ``Node4/16/48/256``, ``LeafNode``, ``Containers``).
That layout depends on the history of the bitmap (the slots a Node48 gave its children, the
capacities of the container arrays, the container types an ``or`` left), so a union is computed
as Java computes it, on the state decoded from the accumulator's bytes:

1. decode both (the tree as nodes, the containers with their types and array capacities);
2. for each container of the input, in key order: ``ior`` it into the accumulator's container of
   the same high part (the result type as Java's ``Container.ior`` picks it), or append a copy
   to the container arrays and insert its key into the tree (``Art.insert``: leaf splits, prefix
   splits, node growth 4 -> 16 -> 48 -> 256);
3. ``runOptimize`` (a container becomes a run container only when that is smaller; a run
   container stays one) and serialize.

Layout (little-endian numbers): a tag byte (0 empty, 1 not); the key count (int64); the tree in
pre-order, each node a header (type: 0..3 = Node4/16/48/256, 4 = leaf; child count int16; prefix
length and prefix bytes) and a body (Node4: 4 key bytes, reversed; Node16: 2 x 8 key bytes, each
reversed; Node48: 256 slot bytes in 32 reversed groups of 8; Node256: 4 x int64 bit masks; leaf:
6 high bytes, container index int64); then the containers (first-level count int32; per array a
trim mark, its length int32, per slot a null mark or the type (0 run, 1 bitmap, 2 array),
cardinality int32 and content) and the container count int64, last first- and second-level
index int32.
"""

from __future__ import annotations

import struct
from dataclasses import dataclass, field

import numpy as np

from paimon_pyspark.errors import CorruptTableError

RUN, BITMAP, ARRAY = 0, 1, 2
_NODE4, _NODE16, _NODE48, _NODE256, _LEAF = 0, 1, 2, 3, 4
_MAX_ARRAY = 4096
_FULL = 1 << 16
_EMPTY_SLOT = 0xFF


@dataclass
class _Container:
    kind: int
    values: np.ndarray  # sorted unique uint16 values, as int64

    @property
    def card(self) -> int:
        return len(self.values)


@dataclass
class _Leaf:
    key: bytes
    index: int


@dataclass
class _Inner:
    kind: int
    prefix: bytes
    children: dict[int, _Inner | _Leaf] = field(default_factory=dict)
    slots: dict[int, int] = field(default_factory=dict)  # Node48: key byte -> slot


Node = _Inner | _Leaf


@dataclass
class Bitmap64:
    """The decoded state of one Java Roaring64Bitmap."""

    root: Node | None = None
    key_count: int = 0
    arrays: list[list[_Container | None]] = field(default_factory=list)
    container_count: int = 0
    first_level: int = -1
    second_level: int = 0

    def containers(self) -> dict[bytes, int]:
        """High part -> container index, in key order."""
        out: dict[bytes, int] = {}

        def walk(node: Node) -> None:
            if isinstance(node, _Leaf):
                out[node.key] = node.index
                return
            for k in sorted(node.children):
                walk(node.children[k])

        if self.root is not None:
            walk(self.root)
        return out

    def container(self, index: int) -> _Container:
        c = self.arrays[index >> 32][index & 0xFFFFFFFF]
        if c is None:
            raise CorruptTableError(f"Roaring64Bitmap container {index} is missing")
        return c

    def add_container(self, c: _Container) -> int:
        """``Containers.addContainer``: the next slot, growing the array by half."""
        if self.first_level == -1:
            self.arrays.append([None])
            self.first_level += 1
            self.second_level = 0
        else:
            self.second_level += 1
        row = self.arrays[self.first_level]
        need = self.second_level + 1
        if need > len(row):
            grown = max(len(row) + (len(row) >> 1), need)
            row.extend([None] * (grown - len(row)))
        row[self.second_level] = c
        self.container_count += 1
        return (self.first_level << 32) | self.second_level


# --- containers --------------------------------------------------------------------------------


def _runs(values: np.ndarray) -> int:
    return 0 if len(values) == 0 else 1 + int(np.count_nonzero(np.diff(values) != 1))


def _efficient(values: np.ndarray) -> int:
    """``RunContainer.toEfficientContainer``: run when no larger than the others."""
    run, card = 2 + 4 * _runs(values), len(values)
    if run <= min(8192, 2 + 2 * card):
        return RUN
    return ARRAY if card <= _MAX_ARRAY else BITMAP


def _canonical(values: np.ndarray) -> int:
    """A bitmap container after ``repairAfterLazy``: array, bitmap, or the full run."""
    if len(values) <= _MAX_ARRAY:
        return ARRAY
    return RUN if len(values) == _FULL else BITMAP


def _ior(acc: _Container, other: _Container) -> _Container:
    """``acc.ior(other)``: Java's container type for the union."""
    values = np.union1d(acc.values, other.values)
    full = len(values) == _FULL
    a, b = acc.kind, other.kind
    if a == ARRAY and b == ARRAY:
        kind = ARRAY if acc.card + other.card <= _MAX_ARRAY else _canonical(values)
    elif a == ARRAY and b == BITMAP:  # other.or(acc)
        kind = RUN if full else BITMAP
    elif a == ARRAY and b == RUN:  # other.or(acc): lazy run, repaired
        if other.card == _FULL or full:
            kind = RUN
        elif _runs(values) > _MAX_ARRAY:
            kind = _canonical(values)
        else:
            kind = _efficient(values)
    elif a == BITMAP:
        kind = BITMAP if b == ARRAY or not full else RUN
    elif acc.card == _FULL:  # a full run container takes nothing
        return acc
    elif b == BITMAP:
        kind = RUN if full else BITMAP
    else:
        kind = _efficient(values)
    return _Container(kind, values)


def _run_optimize(c: _Container) -> _Container:
    """``Roaring64Bitmap.runOptimize``: only a change to a run container is kept."""
    if c.kind == RUN:
        return c
    size = 2 * c.card if c.kind == ARRAY else 8192
    return _Container(RUN, c.values) if size > 2 + 4 * _runs(c.values) else c


# --- the tree ----------------------------------------------------------------------------------


def _mismatch(a: bytes, b: bytes) -> int:
    n = min(len(a), len(b))
    for i in range(n):
        if a[i] != b[i]:
            return i
    return n


def _add_child(node: _Inner, key: int, child: Node) -> _Inner:
    """``Node.insertLeaf`` / ``NodeX.insert``: a new child, growing the node when full."""
    count = len(node.children)
    if node.kind == _NODE4 and count == 4:
        node = _Inner(_NODE16, node.prefix, dict(node.children))
    elif node.kind == _NODE16 and count == 16:
        slots = {k: i for i, k in enumerate(sorted(node.children))}
        node = _Inner(_NODE48, node.prefix, dict(node.children), slots)
    elif node.kind == _NODE48 and count == 48:
        node = _Inner(_NODE256, node.prefix, dict(node.children))
    if node.kind == _NODE48:
        used = set(node.slots.values())
        slot = len(node.children)
        if slot in used:
            slot = next(i for i in range(48) if i not in used)
        node.slots[key] = slot
    node.children[key] = child
    return node


def _insert(node: Node | None, key: bytes, depth: int, index: int) -> Node:
    """``Art.insert``."""
    if node is None:
        return _Leaf(key, index)
    if isinstance(node, _Leaf):
        common = _mismatch(node.key[depth:], key[depth:])
        split = _Inner(_NODE4, key[depth : depth + common])
        split.children[node.key[depth + common]] = node
        return _add_child(split, key[depth + common], _Leaf(key, index))
    if node.prefix:
        miss = _mismatch(node.prefix, key[depth:])
        if miss != len(node.prefix):
            split = _Inner(_NODE4, node.prefix[:miss])
            split.children[node.prefix[miss]] = node
            node.prefix = node.prefix[miss + 1 :]
            return _add_child(split, key[depth + miss], _Leaf(key, index))
        depth += len(node.prefix)
    child = node.children.get(key[depth])
    if child is not None:
        node.children[key[depth]] = _insert(child, key, depth + 1, index)
        return node
    return _add_child(node, key[depth], _Leaf(key, index))


# --- decoding ----------------------------------------------------------------------------------


class _Reader:
    def __init__(self, data: bytes) -> None:
        self.data = data
        self.pos = 0

    def take(self, n: int) -> bytes:
        if self.pos + n > len(self.data):
            raise CorruptTableError("truncated Roaring64Bitmap bytes")
        out = self.data[self.pos : self.pos + n]
        self.pos += n
        return out

    def unpack(self, fmt: str) -> int:
        (value,) = struct.unpack(fmt, self.take(struct.calcsize(fmt)))
        return int(value)


def _read_node(r: _Reader) -> Node:
    kind = r.unpack("<b")
    count = r.unpack("<h")
    prefix = r.take(max(r.unpack("<b"), 0))
    if kind == _LEAF:
        key = r.take(6)
        return _Leaf(key, r.unpack("<q"))
    if kind == _NODE4:
        keys = list(reversed(r.take(4)))[:count]
    elif kind == _NODE16:
        body = r.take(16)
        keys = (list(reversed(body[:8])) + list(reversed(body[8:])))[:count]
    elif kind == _NODE48:
        body = r.take(256)
        index = [b for i in range(32) for b in reversed(body[8 * i : 8 * i + 8])]
        slots = {k: s for k, s in enumerate(index) if s != _EMPTY_SLOT}
        keys = sorted(slots)
    elif kind == _NODE256:
        mask = int.from_bytes(r.take(32), "little")
        keys = [k for k in range(256) if mask >> k & 1]
    else:
        raise CorruptTableError(f"Roaring64Bitmap node type {kind}")
    node = _Inner(kind, prefix)
    if kind == _NODE48:
        node.slots = slots
    for k in keys:
        node.children[k] = _read_node(r)
    return node


def _read_container(r: _Reader) -> _Container:
    kind = r.unpack("<b")
    card = r.unpack("<i")
    if kind == RUN:
        runs = r.unpack("<H")
        pairs = np.frombuffer(r.take(4 * runs), "<u2").astype(np.int64).reshape(-1, 2)
        parts = [np.arange(s, s + n + 1, dtype=np.int64) for s, n in pairs]
        values = np.concatenate(parts) if parts else np.zeros(0, np.int64)
    elif kind == BITMAP:
        bits = np.unpackbits(np.frombuffer(r.take(8192), np.uint8), bitorder="little")
        values = np.flatnonzero(bits).astype(np.int64)
    elif kind == ARRAY:
        values = np.frombuffer(r.take(2 * card), "<u2").astype(np.int64)
    else:
        raise CorruptTableError(f"Roaring64Bitmap container type {kind}")
    return _Container(kind, values)


def decode(data: bytes) -> Bitmap64:
    r = _Reader(data)
    out = Bitmap64()
    if r.unpack("<b") == 0:
        return out
    out.key_count = r.unpack("<q")
    out.root = _read_node(r)
    for _ in range(r.unpack("<i")):
        r.take(1)  # trim mark
        row: list[_Container | None] = []
        for _ in range(r.unpack("<i")):
            row.append(_read_container(r) if r.unpack("<b") == 1 else None)
        out.arrays.append(row)
    out.container_count = r.unpack("<q")
    out.first_level = r.unpack("<i")
    out.second_level = r.unpack("<i")
    return out


def values(bitmap: Bitmap64) -> list[int]:
    """The unsigned 64-bit values of a decoded bitmap, ascending."""
    out: list[int] = []
    for high, index in bitmap.containers().items():
        base = int.from_bytes(high, "big") << 16
        out += [base + v for v in bitmap.container(index).values.tolist()]
    return out


# --- encoding ----------------------------------------------------------------------------------


def _write_node(node: Node, out: bytearray) -> None:
    if isinstance(node, _Leaf):
        out += struct.pack("<bhb", _LEAF, 0, 0) + node.key + struct.pack("<q", node.index)
        return
    keys = sorted(node.children)
    out += struct.pack("<bhb", node.kind, len(keys), len(node.prefix)) + node.prefix
    if node.kind == _NODE4:
        out += bytes(reversed(bytes(keys) + bytes(4 - len(keys))))
    elif node.kind == _NODE16:
        padded = bytes(keys) + bytes(16 - len(keys))
        out += bytes(reversed(padded[:8])) + bytes(reversed(padded[8:]))
    elif node.kind == _NODE48:
        index = bytearray([_EMPTY_SLOT] * 256)
        for k, s in node.slots.items():
            index[k] = s
        out += b"".join(bytes(reversed(index[8 * i : 8 * i + 8])) for i in range(32))
    else:
        out += sum(1 << k for k in keys).to_bytes(32, "little")
    for k in keys:
        _write_node(node.children[k], out)


def _write_container(c: _Container, out: bytearray) -> None:
    out += struct.pack("<bbi", 1, c.kind, c.card)
    if c.kind == ARRAY:
        out += c.values.astype("<u2").tobytes()
    elif c.kind == BITMAP:
        bits = np.zeros(_FULL, np.uint8)
        bits[c.values] = 1
        out += np.packbits(bits, bitorder="little").tobytes()
    else:
        breaks = np.flatnonzero(np.diff(c.values) != 1)
        starts = c.values[np.r_[0, breaks + 1]]
        ends = c.values[np.r_[breaks, len(c.values) - 1]]
        pairs = np.stack([starts, ends - starts], axis=1).astype("<u2")
        out += struct.pack("<H", len(pairs)) + pairs.tobytes()


def encode(bitmap: Bitmap64) -> bytes:
    if bitmap.root is None:
        return b"\x00"
    out = bytearray(b"\x01")
    out += struct.pack("<q", bitmap.key_count)
    _write_node(bitmap.root, out)
    out += struct.pack("<i", len(bitmap.arrays))
    for row in bitmap.arrays:
        out += struct.pack("<bi", -2, len(row))
        for c in row:
            if c is None:
                out += b"\x00"
            else:
                _write_container(c, out)
    out += struct.pack("<qii", bitmap.container_count, bitmap.first_level, bitmap.second_level)
    return bytes(out)


def union(acc: bytes, value: bytes) -> bytes:
    """FieldRoaringBitmap64Agg.agg: ``acc.or(value)``, run-optimized and serialized."""
    into, other = decode(acc), decode(value)
    known = into.containers()
    for high, index in other.containers().items():
        theirs = other.container(index)
        mine = known.get(high)
        if mine is not None:
            merged = _ior(into.container(mine), theirs)
            into.arrays[mine >> 32][mine & 0xFFFFFFFF] = merged
        else:
            new = into.add_container(_Container(theirs.kind, theirs.values))
            into.root = _insert(into.root, high, 0, new)
            into.key_count += 1
    for row in into.arrays:
        for i, c in enumerate(row):
            if c is not None:
                row[i] = _run_optimize(c)
    return encode(into)
