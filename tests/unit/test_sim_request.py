"""sim/request.py's choice of how a `simulate run` reads its trace: streamed unless something needs it whole,
and a converted copy refusing the options of a text trace (named, with the next step)."""

from __future__ import annotations

from pathlib import Path

import pytest

from dbtier.core.errors import DbtierError
from dbtier.sim import mirror
from dbtier.sim.request import SimRequest, check_flags, streams
from dbtier.sim.simulate import Params


def _req(trace: Path, **kw) -> SimRequest:
    params = kw.pop("params", Params())
    return SimRequest(trace, params, {}, **kw)


def test_a_text_trace_streams_unless_something_needs_it_whole(tmp_path):
    f = tmp_path / "t.csv"
    f.write_text("")
    assert streams(_req(f)) is True
    assert streams(_req(f, in_memory=True)) is False
    assert streams(_req(f, sort=True)) is False                 # sorting needs every request
    assert streams(_req(f, volume="v1")) is False               # one volume: picked out of the whole trace
    assert streams(_req(f, volume="all")) is False
    failed = Params(design="preferred-read-mirror", failure=mirror.Failure("fast", 10.0))
    assert streams(_req(f, params=failed)) is False             # the failure's plan reads the trace whole


@pytest.mark.parametrize("kw, flag", [({"format": "csv"}, "--format"), ({"columns": "time=0"}, "--columns"),
                                      ({"sort": True}, "--sort"), ({"skip_bad": True}, "--skip-bad")])
def test_a_converted_copy_refuses_the_options_of_a_text_trace(tmp_path, kw, flag):
    with pytest.raises(DbtierError) as e:
        check_flags(_req(tmp_path, **kw))
    assert e.value.message == (f"{flag} reads a text trace; {tmp_path} is a converted one (read with the options "
                               "of its convert run)")
    assert e.value.hint == f"leave {flag} out, or convert the trace again with it"
    check_flags(_req(tmp_path))                                 # none given: read as converted
