"""`make bench`: every benchmark in turn, each printing its figures; `python -m bench
scale ...` runs the one-node scale benchmark alone (its own arguments follow)."""

from __future__ import annotations

import argparse
import sys

from bench import (
    changing_facts,
    cognition_latency,
    dream_memory,
    dream_runs,
    fair_sharing,
    feedback_curve,
    gateway_latency,
    ingest,
    knowledge_latency,
    locomo_recall,
    mcp_latency,
    mixed_load,
    redis_cluster,
    remember_budget,
    resource_latency,
    routing,
    scale,
    sdk_conversion,
    tenant_idf,
)


def main() -> None:
    if sys.argv[1:2] == ["scale"]:
        scale.main(sys.argv[2:])
        return
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument(
        "--quick", action="store_true", help="smaller sizes (1k and 10k records) for a fast look"
    )
    args = parser.parse_args()
    knowledge_latency.main(["--sizes", "1000,10000"] if args.quick else [])
    ingest.main(["--records", "1000"] if args.quick else [])
    locomo_recall.main([])
    routing.main(["--searches", "100"] if args.quick else [])
    feedback_curve.main(["--rounds", "4"] if args.quick else [])
    resource_latency.main(["--count", "300"] if args.quick else [])
    cognition_latency.main(["--appends", "500", "--traces", "100"] if args.quick else [])
    dream_memory.main(["--events", "10000", "--jobs", "500"] if args.quick else [])
    remember_budget.main(["--calls", "300", "--clients", "1"] if args.quick else [])
    changing_facts.main(["--people", "6"] if args.quick else [])
    dream_runs.main(["--traces", "100", "--calls", "300"] if args.quick else [])
    mcp_latency.main(["--count", "100"] if args.quick else [])
    gateway_latency.main(["--searches", "500"] if args.quick else [])
    tenant_idf.main(["--records", "2000", "--searches", "500"] if args.quick else [])
    redis_cluster.main(["--calls", "300", "--failovers", "1"] if args.quick else [])
    sdk_conversion.main(["--number", "500"] if args.quick else [])
    mixed_load.main(["--seconds", "5", "--rounds", "1"] if args.quick else [])
    fair_sharing.main(["--model-seconds", "2", "--seconds", "5"] if args.quick else [])
    scale.main(
        ["--sizes", "1000,10000", "--event-sizes", "10000", "--searches", "200"]
        if args.quick
        else []
    )


if __name__ == "__main__":
    main()
