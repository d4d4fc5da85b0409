"""The iteration order of a ``java.util.HashMap``, as JDK 8-21 build it, tree bins included.

Java writes several maps in their iteration order: BitmapFileIndex its bitmaps (a
``HashMap<Object, RoaringBitmap32>`` filled by ``computeIfAbsent`` once per non-null row), the
file index container its columns, the aggregate functions ``collect`` (distinct),
``merge_map``, ``nested_update``, ... their results. A map holds its keys in ``2^k`` bins
(``hash ^ hash >>> 16`` masked), 16 at first, doubled when the size passes 3/4 of them: ``put``
after linking a new key at the tail of its bin, ``computeIfAbsent`` at the start of the call
that finds the map over full, before linking a new key at the head. A bin that reaches 8 keys
first doubles the table (below 64 bins), else becomes a red-black tree whose linked order then
follows tree insertions and removals (``putTreeVal`` links a new node after its parent;
``removeTreeNode``; ``moveRootToFront``). :func:`iteration_order` computes a
``computeIfAbsent``-filled map's order over whole arrays (a map that ever grew a tree bin is
replayed node by node); :class:`JavaHashMap` is the node-by-node map itself, for the
aggregate functions' small per-merge maps. Hash codes come from :mod:`spec.java_hash`.
"""

from __future__ import annotations

from collections.abc import Callable, Hashable, Iterator, Sequence
from decimal import Decimal
from itertools import pairwise
from typing import Any

import numpy as np
import numpy.typing as npt

_TREEIFY = 8
_UNTREEIFY = 6
_MIN_TREE_CAPACITY = 64


def spread(hash_codes: npt.NDArray[np.int32]) -> npt.NDArray[np.int32]:
    """``HashMap.hash``: ``h ^ (h >>> 16)``."""
    u = np.asarray(hash_codes, dtype=np.int32).view(np.uint32)
    return (u ^ (u >> np.uint32(16))).view(np.int32)


def iteration_order(
    hash_codes: npt.NDArray[np.int32], compare_keys: Sequence[Any], called_after_last: bool
) -> npt.NDArray[np.int64]:
    """Positions (in insertion order) of distinct keys as ``HashMap.entrySet()`` iterates them.

    ``compare_keys[i]`` orders like key i's ``compareTo`` (used only inside tree bins);
    ``called_after_last``: ``computeIfAbsent`` ran again after the last new key was added."""
    h = spread(hash_codes)
    n = len(h)
    if n == 0:
        return np.zeros(0, dtype=np.int64)
    hu = h.view(np.uint32).astype(np.int64)
    cap = 16
    tree_bin_keys = np.zeros(n, dtype=np.bool_)
    while True:
        # Keys added while the table has ``cap`` bins: all up to the one that overfills it.
        end = min(n, cap * 3 // 4 + 1)
        full = np.bincount(hu[:end] & (cap - 1), minlength=cap) >= _TREEIFY
        if full.any():
            if cap < _MIN_TREE_CAPACITY:  # the table doubled early: replay it all
                return _replay(h, compare_keys, called_after_last, None)
            # A bin's keys and only they share its bins at every later size: replay them alone.
            tree_bin_keys |= full[hu & (cap - 1)]
        if n > end or (n == end and n > cap * 3 // 4 and called_after_last):
            cap *= 2
            continue
        break
    # Within a list bin, the newest key first.
    order = np.lexsort((-np.arange(n), hu & (cap - 1))).astype(np.int64)
    if tree_bin_keys.any():
        sub = np.nonzero(tree_bin_keys)[0]
        keys = compare_keys.tolist() if isinstance(compare_keys, np.ndarray) else compare_keys
        replayed = _replay(h[sub], [keys[i] for i in sub.tolist()], called_after_last, (sub, n))
        order[tree_bin_keys[order]] = sub[replayed]
    return order


def _capacity_before(i: npt.NDArray[np.int64]) -> npt.NDArray[np.int64]:
    """Bins of the table when the key added ``i``-th (0-based) goes in: the least power of two
    from 16 whose 3/4 is at least ``i`` (no early doubling: no bin reached 8 below 64 bins)."""
    need = np.maximum(16, (4 * np.asarray(i, dtype=np.int64) + 2) // 3)
    return np.left_shift(1, np.ceil(np.log2(need)).astype(np.int64))


class _Node:
    __slots__ = (
        "hash",
        "item",
        "key",
        "left",
        "next",
        "parent",
        "pos",
        "prev",
        "red",
        "right",
        "tree",
        "value",
    )

    def __init__(
        self, hash_: int, key: Any, pos: int, item: Hashable = None, value: Any = None
    ) -> None:
        self.hash = hash_  # spread, signed as Java's int
        self.key = key  # ordered like the Java key's compareTo (tree bins only)
        self.pos = pos
        self.item = item  # JavaHashMap's key, and its value
        self.value = value
        self.next: _Node | None = None
        self.prev: _Node | None = None
        self.parent: _Node | None = None
        self.left: _Node | None = None
        self.right: _Node | None = None
        self.red = False
        self.tree = False


def _direction(x: _Node, p: _Node) -> int:
    if p.hash > x.hash:
        return -1
    if p.hash < x.hash:
        return 1
    # Keys are distinct and Comparable to their own class: compareTo never answers 0 here.
    # (Keys Java cannot compare, BinaryRow, byte[], null, tie-break on identity hash codes,
    # an arbitrary order: insertion order stands in for it.)
    try:
        return -1 if x.key < p.key else 1
    except TypeError:
        return -1 if x.pos < p.pos else 1


class _Map:
    """A replay of ``HashMap.putVal``/``resize``/``treeifyBin`` and ``TreeNode``'s methods."""

    def __init__(self) -> None:
        self.tab: dict[int, _Node] = {}
        self.cap = 16
        self.size = 0

    def put(self, node: _Node, cap: int | None = None) -> None:
        """``computeIfAbsent`` of a new key: grow first if over full (or to ``cap`` bins, for a
        replay of some bins alone), link at the bin's head."""
        if cap is None:
            self.touch()
        while self.cap < (cap or 0):
            self._resize()
        tab = self.tab
        i = node.hash & (self.cap - 1)
        first = tab.get(i)
        if first is not None and first.tree:
            self._put_tree(first, node)
        else:
            count = 0
            e = first
            while e is not None:
                count += 1
                e = e.next
            node.next = first
            tab[i] = node
            if count >= _TREEIFY - 1:
                self._treeify_bin(node.hash)
        self.size += 1

    def append(self, node: _Node) -> None:
        """``put`` of a new key: link at the bin's tail, then grow if over full."""
        i = node.hash & (self.cap - 1)
        e = self.tab.get(i)
        if e is None:
            self.tab[i] = node
        elif e.tree:
            self._put_tree(e, node)
        else:
            count = 1
            while e.next is not None:
                e = e.next
                count += 1
            e.next = node
            if count >= _TREEIFY:
                self._treeify_bin(node.hash)
        self.size += 1
        if self.size > self.cap * 3 // 4:
            self._resize()

    def remove(self, node: _Node) -> None:
        """``remove`` of a present key (``removeNode``; ``removeTreeNode`` in a tree bin)."""
        i = node.hash & (self.cap - 1)
        first = self.tab[i]
        self.size -= 1
        if first.tree:
            self._remove_tree_node(node, i)
        elif first is node:
            self._set_bin(i, node.next)
        else:
            e = first
            while e.next is not node:
                assert e.next is not None
                e = e.next
            e.next = node.next
        node.next = None

    def touch(self) -> None:
        """``computeIfAbsent`` of a key already present: only the growth check."""
        if self.size > self.cap * 3 // 4:
            self._resize()

    def nodes(self) -> Iterator[_Node]:
        for index in sorted(self.tab):
            e: _Node | None = self.tab[index]
            while e is not None:
                yield e
                e = e.next

    def order(self) -> list[int]:
        return [e.pos for e in self.nodes()]

    def _set_bin(self, index: int, head: _Node | None) -> None:
        if head is None:
            self.tab.pop(index, None)
        else:
            self.tab[index] = head

    # -- table --

    def _resize(self) -> None:
        old = self.tab
        n = self.cap
        tab: dict[int, _Node] = {}
        self.tab = tab
        self.cap = 2 * n
        for j, e in old.items():
            if e.next is None:
                tab[e.hash & (2 * n - 1)] = e
            elif e.tree:
                self._split(e, j, n)
            else:
                lo: list[_Node] = []
                hi: list[_Node] = []
                while e is not None:
                    (hi if e.hash & n else lo).append(e)
                    e = e.next
                for part, idx in ((lo, j), (hi, j + n)):
                    if part:
                        for a, b in pairwise(part):
                            a.next = b
                        part[-1].next = None
                        tab[idx] = part[0]

    def _treeify_bin(self, hash_: int) -> None:
        if self.cap < _MIN_TREE_CAPACITY:
            self._resize()
            return
        i = hash_ & (self.cap - 1)
        e: _Node | None = self.tab[i]
        prev: _Node | None = None
        while e is not None:
            e.tree = True
            e.prev = prev
            prev = e
            e = e.next
        self._treeify(self.tab[i])

    def _split(self, b: _Node, index: int, bit: int) -> None:
        lo: list[_Node] = []
        hi: list[_Node] = []
        e: _Node | None = b
        while e is not None:
            nxt = e.next
            (hi if e.hash & bit else lo).append(e)
            e = nxt
        for part, other, idx in ((lo, hi, index), (hi, lo, index + bit)):
            if not part:
                continue
            for a, b2 in pairwise(part):
                a.next = b2
                b2.prev = a
            part[0].prev = None
            part[-1].next = None
            self.tab[idx] = part[0]
            if len(part) <= _UNTREEIFY:
                for x in part:
                    x.tree = False
                    x.prev = x.parent = x.left = x.right = None
            elif other:
                self._treeify(part[0])

    # -- TreeNode --

    def _treeify(self, head: _Node) -> None:
        root: _Node | None = None
        x: _Node | None = head
        while x is not None:
            nxt = x.next
            x.left = x.right = None
            if root is None:
                x.parent = None
                x.red = False
                root = x
            else:
                p = root
                while True:
                    d = _direction(x, p)
                    xp = p
                    child = p.left if d <= 0 else p.right
                    if child is None:
                        x.parent = xp
                        if d <= 0:
                            xp.left = x
                        else:
                            xp.right = x
                        root = _balance_insertion(root, x)
                        break
                    p = child
            x = nxt
        assert root is not None
        self._move_root_to_front(root)

    def _put_tree(self, first: _Node, x: _Node) -> None:
        root = first
        while root.parent is not None:
            root = root.parent
        p = root
        while True:
            d = _direction(x, p)
            xp = p
            child = p.left if d <= 0 else p.right
            if child is None:
                xpn = xp.next
                x.tree = True
                x.next = xpn
                if d <= 0:
                    xp.left = x
                else:
                    xp.right = x
                xp.next = x
                x.parent = x.prev = xp
                if xpn is not None:
                    xpn.prev = x
                self._move_root_to_front(_balance_insertion(root, x))
                return
            p = child

    def _remove_tree_node(self, p: _Node, index: int) -> None:
        """``TreeNode.removeTreeNode`` (movable): unlink from the bin's list, then untreeify a
        small tree or delete from it and move its root to the front."""
        root: _Node | None = self.tab[index]
        succ, pred = p.next, p.prev
        first = succ if pred is None else self.tab[index]
        if pred is None:
            self._set_bin(index, succ)
        else:
            pred.next = succ
        if succ is not None:
            succ.prev = pred
        if first is None:
            return
        assert root is not None
        while root.parent is not None:
            root = root.parent
        rl = root.left
        if root.right is None or rl is None or rl.left is None:
            e: _Node | None = first
            while e is not None:
                e.tree = False
                e.prev = e.parent = e.left = e.right = None
                e = e.next
            return
        pl, pr = p.left, p.right
        if pl is not None and pr is not None:
            s = pr
            while s.left is not None:
                s = s.left
            s.red, p.red = p.red, s.red
            sr = s.right
            pp = p.parent
            if s is pr:
                p.parent = s
                s.right = p
            else:
                sp = s.parent
                p.parent = sp
                if sp is not None:
                    if s is sp.left:
                        sp.left = p
                    else:
                        sp.right = p
                s.right = pr
                pr.parent = s
            p.left = None
            p.right = sr
            if sr is not None:
                sr.parent = p
            s.left = pl
            pl.parent = s
            s.parent = pp
            if pp is None:
                root = s
            elif p is pp.left:
                pp.left = s
            else:
                pp.right = s
            replacement = sr if sr is not None else p
        elif pl is not None:
            replacement = pl
        elif pr is not None:
            replacement = pr
        else:
            replacement = p
        if replacement is not p:
            pp = replacement.parent = p.parent
            if pp is None:
                root = replacement
                replacement.red = False
            elif p is pp.left:
                pp.left = replacement
            else:
                pp.right = replacement
            p.left = p.right = p.parent = None
        r = root if p.red else _balance_deletion(root, replacement)
        if replacement is p:
            pp = p.parent
            p.parent = None
            if pp is not None:
                if p is pp.left:
                    pp.left = None
                elif p is pp.right:
                    pp.right = None
        self._move_root_to_front(r)

    def _move_root_to_front(self, root: _Node) -> None:
        index = root.hash & (self.cap - 1)
        first = self.tab.get(index)
        if root is not first:
            self.tab[index] = root
            rp = root.prev
            rn = root.next
            if rn is not None:
                rn.prev = rp
            if rp is not None:
                rp.next = rn
            if first is not None:
                first.prev = root
            root.next = first
            root.prev = None


def _rotate_left(root: _Node, p: _Node) -> _Node:
    r = p.right
    if r is not None:
        rl = p.right = r.left
        if rl is not None:
            rl.parent = p
        pp = r.parent = p.parent
        if pp is None:
            root = r
            r.red = False
        elif pp.left is p:
            pp.left = r
        else:
            pp.right = r
        r.left = p
        p.parent = r
    return root


def _rotate_right(root: _Node, p: _Node) -> _Node:
    left = p.left
    if left is not None:
        lr = p.left = left.right
        if lr is not None:
            lr.parent = p
        pp = left.parent = p.parent
        if pp is None:
            root = left
            left.red = False
        elif pp.right is p:
            pp.right = left
        else:
            pp.left = left
        left.right = p
        p.parent = left
    return root


def _balance_insertion(root: _Node, x: _Node) -> _Node:
    x.red = True
    while True:
        xp = x.parent
        if xp is None:
            x.red = False
            return x
        xpp = xp.parent
        if not xp.red or xpp is None:
            return root
        xppl = xpp.left
        if xp is xppl:
            xppr = xpp.right
            if xppr is not None and xppr.red:
                xppr.red = False
                xp.red = False
                xpp.red = True
                x = xpp
            else:
                if x is xp.right:
                    x = xp
                    root = _rotate_left(root, x)
                    xp = x.parent
                    xpp = None if xp is None else xp.parent
                if xp is not None:
                    xp.red = False
                    if xpp is not None:
                        xpp.red = True
                        root = _rotate_right(root, xpp)
        else:
            if xppl is not None and xppl.red:
                xppl.red = False
                xp.red = False
                xpp.red = True
                x = xpp
            else:
                if x is xp.left:
                    x = xp
                    root = _rotate_right(root, x)
                    xp = x.parent
                    xpp = None if xp is None else xp.parent
                if xp is not None:
                    xp.red = False
                    if xpp is not None:
                        xpp.red = True
                        root = _rotate_left(root, xpp)


def _balance_deletion(root: _Node, x: _Node | None) -> _Node:
    while True:
        if x is None or x is root:
            return root
        xp = x.parent
        if xp is None:
            x.red = False
            return x
        if x.red:
            x.red = False
            return root
        if xp.left is x:
            xpr = xp.right
            if xpr is not None and xpr.red:
                xpr.red = False
                xp.red = True
                root = _rotate_left(root, xp)
                xp = x.parent
                xpr = None if xp is None else xp.right
            if xpr is None:
                x = xp
                continue
            sl, sr = xpr.left, xpr.right
            if (sr is None or not sr.red) and (sl is None or not sl.red):
                xpr.red = True
                x = xp
                continue
            if sr is None or not sr.red:
                if sl is not None:
                    sl.red = False
                xpr.red = True
                root = _rotate_right(root, xpr)
                xp = x.parent
                xpr = None if xp is None else xp.right
            if xpr is not None:
                xpr.red = False if xp is None else xp.red
                sr = xpr.right
                if sr is not None:
                    sr.red = False
            if xp is not None:
                xp.red = False
                root = _rotate_left(root, xp)
            x = root
        else:
            xpl = xp.left
            if xpl is not None and xpl.red:
                xpl.red = False
                xp.red = True
                root = _rotate_right(root, xp)
                xp = x.parent
                xpl = None if xp is None else xp.left
            if xpl is None:
                x = xp
                continue
            sl, sr = xpl.left, xpl.right
            if (sl is None or not sl.red) and (sr is None or not sr.red):
                xpl.red = True
                x = xp
                continue
            if sl is None or not sl.red:
                if sr is not None:
                    sr.red = False
                xpl.red = True
                root = _rotate_left(root, xpl)
                xp = x.parent
                xpl = None if xp is None else xp.left
            if xpl is not None:
                xpl.red = False if xp is None else xp.red
                sl = xpl.left
                if sl is not None:
                    sl.red = False
            if xp is not None:
                xp.red = False
                root = _rotate_right(root, xp)
            x = root


def _replay(
    h: npt.NDArray[np.int32],
    compare_keys: Sequence[Any],
    called_after_last: bool,
    subset: tuple[npt.NDArray[np.int64], int] | None,
) -> npt.NDArray[np.int64]:
    """Replay ``computeIfAbsent`` key by key; positions in iteration order. ``subset``: these
    keys are the ones at these insertion positions out of ``n``, alone in their bins; the table
    is grown on the whole map's schedule."""
    m = _Map()
    hashes = h.tolist()
    keys = compare_keys.tolist() if isinstance(compare_keys, np.ndarray) else list(compare_keys)
    if subset is None:
        for i, (hh, k) in enumerate(zip(hashes, keys, strict=True)):
            m.put(_Node(hh, k, i))
        if called_after_last:
            m.touch()
    else:
        positions, n = subset
        caps = _capacity_before(positions).tolist()
        for i, (hh, k, cap) in enumerate(zip(hashes, keys, caps, strict=True)):
            m.put(_Node(hh, k, i), cap)
        last = n if called_after_last else n - 1
        final = int(_capacity_before(np.asarray([last]))[0])
        while m.cap < final:
            m._resize()
    return np.asarray(m.order(), dtype=np.int64)


# Keys that stand for themselves in ``compareTo`` inside a tree bin; others (null, byte[])
# Java cannot compare: their insertion number stands in.
_ORDERED = frozenset((int, bool, str, bytes, tuple, Decimal))


class JavaHashMap:
    """A ``java.util.HashMap`` (default capacity) with Java's hash codes: ``put``,
    ``computeIfAbsent``, ``get``, ``remove``, and ``items`` in its iteration order."""

    def __init__(self) -> None:
        self._map = _Map()
        self._nodes: dict[Hashable, _Node] = {}
        self._seq = 0

    def __contains__(self, key: Hashable) -> bool:
        return key in self._nodes

    def __len__(self) -> int:
        return len(self._nodes)

    def get(self, key: Hashable) -> Any:
        node = self._nodes.get(key)
        return None if node is None else node.value

    def _new(self, key: Hashable, hash_code: int, value: Any) -> _Node:
        h = hash_code & 0xFFFFFFFF
        h ^= h >> 16
        seq = self._seq
        self._seq = seq + 1
        node = _Node(
            h - (1 << 32) if h & 0x80000000 else h,
            key if type(key) in _ORDERED else seq,
            seq,
            key,
            value,
        )
        self._nodes[key] = node
        return node

    def put(self, key: Hashable, hash_code: int, value: Any) -> None:
        node = self._nodes.get(key)
        if node is not None:
            node.value = value
            return
        self._map.append(self._new(key, hash_code, value))

    def compute_if_absent(self, key: Hashable, hash_code: int, make: Callable[[], Any]) -> Any:
        self._map.touch()
        node = self._nodes.get(key)
        if node is not None:
            return node.value
        value = make()
        self._map.put(self._new(key, hash_code, value), self._map.cap)
        return value

    def remove(self, key: Hashable) -> None:
        node = self._nodes.pop(key, None)
        if node is not None:
            self._map.remove(node)

    def items(self) -> Iterator[tuple[Hashable, Any]]:
        """(key, value) in Java's iteration order."""
        for node in self._map.nodes():
            yield node.item, node.value
