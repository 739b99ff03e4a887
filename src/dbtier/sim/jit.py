"""How the simulator's hot loops are compiled (`@hot`), and the CPU hint they give (`prefetch`).

nogil, since sweeps replay their sizes on threads; cache, so a machine compiles each kernel once; and
without numba's runtime (NRT). With it, every array or view of one that a kernel hands to an inlined
helper (the list and policy rules of sim/policy/) costs an atomic reference count on the hot path:
the block cache's LRU replayed 15 M requests/s with it and 39 M without (20 M Zipf requests), same answers.
A `@hot` kernel allocates nothing (its arrays come from the caller); one that did would not compile.
"""

from __future__ import annotations

import numba
from llvmlite import ir
from numba import types
from numba.core import cgutils
from numba.extending import intrinsic

hot = numba.njit(nogil=True, cache=True, _nrt=False)  # type: ignore[call-overload]  # _nrt: numba-private


@intrinsic
def prefetch(typingctx, arr, idx):
    """Hint the CPU to fetch arr[idx]'s cache line (llvm.prefetch; read, high locality). No effect on results."""
    sig = types.void(arr, idx)

    def codegen(context, builder, signature, args):
        aryty, idxty = signature.args
        ary = context.make_array(aryty)(context, builder, args[0])
        index = context.cast(builder, args[1], idxty, types.intp)
        ptr = cgutils.get_item_pointer(context, builder, aryty, ary, [index], wraparound=False)
        i8p = ir.IntType(8).as_pointer()
        i32 = ir.IntType(32)
        fn = cgutils.get_or_insert_function(builder.module, ir.FunctionType(ir.VoidType(), [i8p, i32, i32, i32]),
                                            "llvm.prefetch.p0")
        builder.call(fn, [builder.bitcast(ptr, i8p), ir.Constant(i32, 0), ir.Constant(i32, 3), ir.Constant(i32, 1)])
        return context.get_dummy_value()
    return sig, codegen
