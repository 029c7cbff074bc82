"""A time loop calling an `@adpasses.checkpoint` step with two arrays,
under `snapshots=` (revolve) and `memory_limit=` (segments): the loop's
body is outlined into a segment function whose parameters carry what the
caller knew about them (`ad.noalias` on each array that overlaps none of
the others: distinct allocations, an allocation and an argument, views of
those, arguments the Python API passes without overlap). Gradients must
equal the uncheckpointed one and central finite differences on random
inputs; arrays that do share memory are still refused."""

from __future__ import annotations

import numpy as np
import pytest

import adpasses
from checkpoint_alias_kernels import (
    argument_state_and_local_scratch,
    local_state_and_scratch,
    overlapping_views,
    two_arguments,
    views_of_distinct_allocations,
)
from finite_diff import assert_matches, copy_args, finite_differences

BUDGETS = [{"snapshots": 1}, {"snapshots": 3}, {"memory_limit": 0, "schedule": "sqrt"}]


def check(f, args, argnums, budget):
    ref = adpasses.grad(f, argnums)(*copy_args(args))
    got = adpasses.grad(f, argnums, **budget)(*copy_args(args))
    ref = ref if isinstance(ref, tuple) else (ref,)
    got = got if isinstance(got, tuple) else (got,)
    for g, r, d in zip(got, ref, finite_differences(f, list(args), argnums)):
        np.testing.assert_allclose(g, r, rtol=1e-12, atol=1e-14)
        assert_matches(np.atleast_1d(g), np.atleast_1d(d))


@pytest.mark.parametrize("budget", BUDGETS)
@pytest.mark.parametrize("steps", [0, 1, 6])
def test_two_fresh_local_arrays(budget, steps):
    x = np.random.default_rng(steps).uniform(-0.8, 0.8, 5)
    check(local_state_and_scratch, (x, steps), (0,), budget)


@pytest.mark.parametrize("budget", BUDGETS)
def test_argument_state_and_a_local_scratch_array(budget):
    u = np.random.default_rng(7).uniform(-0.8, 0.8, 4)
    check(argument_state_and_local_scratch, (u, 9), (0,), budget)


@pytest.mark.parametrize("budget", BUDGETS)
def test_views_of_two_distinct_allocations(budget):
    x = np.random.default_rng(8).uniform(-0.8, 0.8, 4)
    check(views_of_distinct_allocations, (x, 7), (0,), budget)


@pytest.mark.parametrize("budget", BUDGETS)
def test_two_arguments_that_do_not_overlap(budget):
    rng = np.random.default_rng(9)
    check(two_arguments, (rng.uniform(-0.8, 0.8, 4), rng.uniform(-0.8, 0.8, 4), 5), (0, 1), budget)


def test_segment_parameters_carry_the_callers_facts():
    """The outlined segment's arrays are ad.noalias exactly where the caller
    proves them separate."""
    from adpasses.dialects.ad import NOALIAS_ATTR

    x = np.random.default_rng(1).uniform(-0.8, 0.8, 4)
    jf = adpasses.jit(local_state_and_scratch, snapshots=2)
    adpasses.grad(jf)(x.copy(), 3)
    [loaded] = jf._gradients.values()  # the one gradient compiled
    module = loaded.module
    [segment] = [f for f in module.ops if getattr(f, "sym_name", None) is not None
                 and f.sym_name.data.endswith("_segment_0")]
    attrs = [d.data for d in segment.arg_attrs.data]
    memrefs = [k for k, t in enumerate(segment.function_type.inputs.data) if hasattr(t, "get_shape")]
    assert memrefs and all(NOALIAS_ATTR in attrs[k] for k in memrefs)


@pytest.mark.parametrize("budget", BUDGETS)
def test_arrays_that_share_memory_are_still_refused(budget):
    x = np.random.default_rng(2).uniform(-0.8, 0.8, 4)
    with pytest.raises(adpasses.CompileError, match="may share memory"):
        adpasses.grad(overlapping_views, **budget)(x.copy(), 3)


@pytest.mark.parametrize("budget", BUDGETS)
def test_the_same_array_passed_twice_is_refused(budget):
    """The caller's arrays overlap: the conservative version is compiled,
    whose segment parameters are not noalias, and the checkpointed call in
    it refuses them."""
    u = np.random.default_rng(3).uniform(-0.8, 0.8, 4)
    with pytest.raises(adpasses.CompileError, match="may share memory"):
        adpasses.grad(two_arguments, argnums=(0, 1), **budget)(u, u, 3)
