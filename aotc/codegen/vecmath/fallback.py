"""A libm call the loop vectorizer can keep behind a per-lane branch.

Kernels that hand rare arguments to libm (sin of 1e300) put the call in a branch of its
own. For the loop to still vectorize, LLVM must be able to *predicate* that call: it
needs a vector variant that takes a lane mask, declared through the
``vector-function-abi-variant`` attribute (the mechanism behind ``-fveclib``). So the
call goes to an internal wrapper ``aotc.vecmath.libm.sin`` with no memory effects (we
never read errno) that lists masked variants for 2 to 16 lanes; each variant calls libm
only for its active lanes. The wrapper also hides ``sin`` from LLVM, which would turn a
side-effect-free ``sin`` into the speculatable ``llvm.sin`` and call it for every lane.
"""

from __future__ import annotations

from llvmlite import ir

from .core import Math, Val

I1 = ir.IntType(1)
VARIANT_LANES = (2, 4, 8, 16)
FALLBACK_FUNCTIONS = ("sin", "cos", "tan")
MAPPINGS_ATTRIBUTE = "vector-function-abi-variant"


class _Attributes(ir.values.FunctionAttributes):  # type: ignore[misc]  # llvmlite is untyped
    """Function attributes that may also hold one ``"key"="value"`` string attribute
    (llvmlite's own set only accepts LLVM's enum attribute names)."""

    def __init__(self, extra: str) -> None:
        self._known = ir.values.FunctionAttributes._known | {extra}
        super().__init__()


def call_libm(m: Math, name: str, x: Val) -> Val:
    """``name(x)`` (float64) through the predicable wrapper."""
    module = m.b.module
    wrapper = module.globals.get(f"aotc.vecmath.libm.{name}")
    if wrapper is None:
        _define_wrappers(module)
        wrapper = module.globals[f"aotc.vecmath.libm.{name}"]
    return m.b.call(wrapper, [x])


def _define_wrappers(module: ir.Module) -> None:
    """Every wrapper at once, so ``@llvm.compiler.used`` is written once per module."""
    variants: list[ir.Function] = []
    for name in FALLBACK_FUNCTIONS:
        variants += _define_wrapper(module, name, ir.DoubleType())
    ptr = ir.PointerType()
    used = ir.GlobalVariable(module, ir.ArrayType(ptr, len(variants)), "llvm.compiler.used")
    used.linkage = "appending"
    used.section = "llvm.metadata"
    used.initializer = ir.Constant(ir.ArrayType(ptr, len(variants)), variants)


def _libm_function(module: ir.Module, name: str, ty: ir.Type) -> ir.Function:
    fn = module.globals.get(name)
    if fn is None:
        fn = ir.Function(module, ir.FunctionType(ty, [ty]), name)
        fn.attributes.add("nounwind")
    return fn


def _define_wrapper(module: ir.Module, name: str, ty: ir.Type) -> list[ir.Function]:
    """The wrapper of ``name``; returns its masked variants, which must be kept alive
    (listed in ``@llvm.compiler.used``): unused until the vectorizer runs, they would
    be deleted first."""
    target = _libm_function(module, name, ty)
    wrapper_name = f"aotc.vecmath.libm.{name}"
    variants = [_masked_variant(module, target, wrapper_name, ty, lanes)
                for lanes in VARIANT_LANES]
    mappings = ",".join(f"_ZGV_LLVM_M{lanes}v_{wrapper_name}({v.name})"
                        for lanes, v in zip(VARIANT_LANES, variants, strict=True))
    wrapper = ir.Function(module, ir.FunctionType(ty, [ty]), wrapper_name)
    wrapper.linkage = "internal"
    wrapper.attributes = _Attributes(f'"{MAPPINGS_ATTRIBUTE}"="{mappings}"')
    for attribute in ("noinline", "nounwind", "readnone",
                      f'"{MAPPINGS_ATTRIBUTE}"="{mappings}"'):
        wrapper.attributes.add(attribute)
    b = ir.IRBuilder(wrapper.append_basic_block("entry"))
    b.ret(b.call(target, list(wrapper.args)))
    return variants


def _masked_variant(module: ir.Module, target: ir.Function, wrapper_name: str,
                    ty: ir.Type, lanes: int) -> ir.Function:
    """``<lanes x ty> f(<lanes x ty> x, <lanes x i1> mask)``: ``target`` on active lanes."""
    vty = ir.VectorType(ty, lanes)
    fn = ir.Function(module, ir.FunctionType(vty, [vty, ir.VectorType(I1, lanes)]),
                     f"{wrapper_name}.masked{lanes}")
    fn.linkage = "internal"
    fn.attributes.add("nounwind")
    fn.attributes.add("readnone")
    x, mask = fn.args
    b = ir.IRBuilder(fn.append_basic_block("entry"))
    acc: Val = ir.Constant(vty, None)
    lanes_block = b.append_basic_block("lanes")
    bits = ir.IntType(lanes)
    none = b.icmp_unsigned("==", b.bitcast(mask, bits), ir.Constant(bits, 0))
    with b.if_then(none, likely=True):
        b.ret(acc)
    b.branch(lanes_block)
    b.position_at_end(lanes_block)
    for lane in range(lanes):
        index = ir.Constant(ir.IntType(32), lane)
        here = b.block
        active = b.append_basic_block(f"lane{lane}")
        after = b.append_basic_block(f"after{lane}")
        b.cbranch(b.extract_element(mask, index), active, after)
        b.position_at_end(active)
        filled = b.insert_element(acc, b.call(target, [b.extract_element(x, index)]), index)
        b.branch(after)
        b.position_at_end(after)
        phi = b.phi(vty)
        phi.add_incoming(acc, here)
        phi.add_incoming(filled, active)
        acc = phi
    b.ret(acc)
    return fn
