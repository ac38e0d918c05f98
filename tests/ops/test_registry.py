"""Every primitive has every rule: a missing table entry is a test failure, not a crash."""

from __future__ import annotations

import pytest

from aotc.ops import ALL_PRIMITIVES, impl_rules, type_rules


@pytest.mark.parametrize("name", sorted(ALL_PRIMITIVES))
def test_front_end_rules_exist(name):
    prim = ALL_PRIMITIVES[name]
    assert prim in type_rules, f"{name} has no type rule"
    assert prim in impl_rules, f"{name} has no NumPy reference rule"


@pytest.mark.parametrize("name", sorted(ALL_PRIMITIVES))
def test_codegen_rule_exists(name):
    from aotc.codegen import has_lowering

    assert has_lowering(ALL_PRIMITIVES[name]), f"{name} has no codegen lowering"
