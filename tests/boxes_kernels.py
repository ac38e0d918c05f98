"""Kernels that grow and shrink lists, sets and dicts in runtime loops (boxes), for
test_boxes.py: the same source runs as Python, through aotc.jit and built as an
extension."""

import numpy as np

import aotc
from aotc import f64, i64, u64


@aotc.export
def queens(n: i64) -> i64:
    """n-queens solutions, by backtracking with a stack of columns."""
    count = 0
    cols = []
    col = 0
    while True:
        placed = False
        while col < n:
            ok = True
            r = len(cols)
            for i in range(r):
                c = cols[i]
                if c == col or abs(c - col) == r - i:
                    ok = False
                    break
            if ok:
                cols.append(col)
                placed = True
                break
            col += 1
        if placed:
            if len(cols) == n:
                count += 1
                col = cols.pop() + 1
            else:
                col = 0
        else:
            if len(cols) == 0:
                break
            col = cols.pop() + 1
    return count


@aotc.export
def bfs(adj: i64[:, :], start: i64) -> i64:
    """Breadth-first order of a graph: a queue (pop(0)) and a visited set."""
    queue = [start]
    seen = {start}
    order = 0
    total = 0
    while queue:
        node = queue.pop(0)
        total += order * node
        order += 1
        for j in range(adj.shape[1]):
            if adj[node, j] and j not in seen:
                seen.add(j)
                queue.append(j)
    return total


@aotc.export
def group_totals(keys: i64[:], vals: f64[:]) -> tuple:
    """A dict of running sums (get with a default), its items, and membership."""
    sums = {}
    for i in range(keys.shape[0]):
        sums[keys[i]] = sums.get(keys[i], 0.0) + vals[i]
    weighted = 0.0
    for k, v in sums.items():
        weighted += v * k
    return weighted, len(sums), 3 in sums


@aotc.export
def pair_kinds(x: i64[:]) -> tuple:
    """A set of tuples: distinct neighbour pairs, and one looked up."""
    seen = set()
    for i in range(x.shape[0] - 1):
        seen.add((x[i], x[i + 1]))
    return len(seen), (1, 2) in seen


@aotc.export
def float_set(x: f64[:]) -> int:
    """Python's float keys: 0.0 and -0.0 are one, every NaN is new."""
    s = set()
    for v in x:
        s.add(v)
    return len(s)


@aotc.export
def list_surgery(n: i64) -> tuple:
    """insert, remove, del, item writes, index, count and pop(i) on a list that a loop
    grew."""
    lst = []
    for i in range(n):
        lst.append(i)
    k = 0
    while k < n:
        if k % 2 == 0:
            lst.insert(0, -k)
        k += 1
    lst.remove(0)
    del lst[-1]
    lst[0] = 100
    first = lst.pop(1)
    return lst[0] + lst[-1], len(lst), lst.index(1), lst.count(-2), first


@aotc.export
def two_pops(n: i64) -> i64:
    """Python's IndexError for a pop from an empty list."""
    st = []
    i = 0
    while i < n:
        st.append(i)
        i += 1
    return st.pop() + st.pop()


@aotc.export
def lookup(x: i64[:], k: i64) -> i64:
    """Python's KeyError, the key as its message."""
    d = {}
    for v in x:
        d[v] = v * 2
    return d[k]


@aotc.export
def discards(x: i64[:], gone: i64) -> tuple:
    """discard (absent is fine), remove (absent is KeyError), and builtins over a set."""
    s = set()
    for v in x:
        s.add(v)
    s.discard(99)
    s.remove(gone)
    return len(s), sum(s), min(s), max(s), any(s), all(s)


@aotc.export
def dedupe(x: i64[:]):
    """A set and a list together: the list (appended on some iterations of a counted
    loop) is an array after the loop, the set a box."""
    out = []
    seen = set()
    for v in x:
        if v not in seen:
            seen.add(v)
            out.append(v)
    return np.array(out)


@aotc.export
def chains(prev: i64[:], targets: i64[:]) -> i64:
    """A list a while loop nested in another loop appends to (no count before the
    kernel runs)."""
    total = 0
    for t in targets:
        acc = []
        v = t
        while v != -1:
            acc.append(v)
            v = prev[v]
        total += len(acc) * acc[-1]
    return total


@aotc.export
def stacked_energy(x: f64[:]) -> f64:
    """A float result through a list grown in a while loop (no gradient: a located
    error when one is asked for)."""
    kept = []
    i = 0
    while i < x.shape[0]:
        if x[i] > 0:
            kept.append(x[i] * x[i])
        i += 1
    total = 0.0
    while kept:
        total += kept.pop()
    return total


@aotc.export
def sorted_set(x: i64[:]) -> i64:
    """sorted() of a set, both ways, iterated with enumerate."""
    s = set()
    for v in x:
        s.add(v)
    t = 0
    for i, v in enumerate(sorted(s)):
        t += i * v
    r = sorted(s, reverse=True)
    return t * 1000 + r[0]


@aotc.export
def distinct(x: f64[:]) -> i64:
    """set() of an array's items."""
    return len(set(x))


@aotc.export
def sort_stack(n: i64) -> i64:
    """list.sort() of a list a while loop filled, then read at both ends."""
    st = []
    k = n
    while k > 0:
        st.append((k * 7) % 5)
        k -= 1
    st.sort()
    return st[0] * 100 + st[-1] * 10 + len(st)


@aotc.export
def primes_list(n: i64):
    """The first n primes, as a list a while loop appends to (the kernel's result)."""
    ps = []
    k = 2
    while len(ps) < n:
        ok = True
        for p in ps:
            if p * p > k:
                break
            if k % p == 0:
                ok = False
                break
        if ok:
            ps.append(k)
        k += 1
    return ps


@aotc.export
def tallies(x: i64[:]):
    """A dict and a set as results, and a list of tuples."""
    counts = {}
    odd = set()
    steps = []
    for v in x:
        counts[v] = counts.get(v, 0) + 1
        if v % 2:
            odd.add(v)
    i = 0
    while i + 1 < x.shape[0]:
        steps.append((x[i], x[i + 1]))
        i += 2
    return counts, odd, steps


@aotc.export
def bfs_deque(adj: i64[:, :], start: i64) -> i64:
    """Breadth-first order with a collections.deque (popleft) and a defaultdict of
    depths (a key read before it is set reads 0)."""
    from collections import defaultdict, deque

    queue = deque([start])
    depth = defaultdict(int)
    depth[start] = 1
    total = 0
    while queue:
        node = queue.popleft()
        total += depth[node] * node
        for j in range(adj.shape[1]):
            if adj[node, j] and depth[j] == 0:
                depth[j] = depth[node] + 1
                queue.append(j)
    return total * 100 + len(depth)


@aotc.export
def updated(x: i64[:]) -> tuple:
    """set.update and list.extend with several items at a time (an update once put
    them in as a list's items: duplicates a set must not hold)."""
    s = set()
    lst = []
    for v in x:
        s.update([v, v + 1])
        lst.extend([v, -v])
        lst.pop()
    return len(s), sum(s), len(lst)


@aotc.export
def big_sorted(x: u64[:]) -> tuple:
    """sorted() of a set of uint64: values past 2**63 sort last (unsigned order)."""
    s = set()
    for v in x:
        s.add(v)
    t = sorted(s)
    return t[0], t[-1], len(t)
