"""``agentctx bench``: reproducible retrieval benchmarks (the coding-memory one and LongMemEval_S).

Every run builds fresh stores in a temporary folder: the user's own store is never read or
written. Knobs come from the usual configuration (``config.json``, ``AGENTCTX_<KEY>``), and each
report names the values it ran with.
"""

from __future__ import annotations

import sys

import typer

from agentctx.cli.common import JsonOption, fail, print_json

bench_app = typer.Typer(help="Measure retrieval quality: the coding-memory benchmark shipped with "
                             "agentctx, and LongMemEval_S.", no_args_is_help=True)

ModelOption = typer.Option(None, "--model", metavar="PATH",
                           help="A model2vec model folder for the hybrid configuration "
                                "(default: the embed_model knob; never downloads).")
NoHybridOption = typer.Option(False, "--no-hybrid",
                              help="Skip the hybrid (vector) configuration.")


@bench_app.command("coding")
def coding_command(
    json_output: bool = JsonOption,
    held_out_only: bool = typer.Option(False, "--held-out-only",
                                       help="Score only the held-out prompts."),
    tuning_only: bool = typer.Option(False, "--tuning-only",
                                     help="Score only the tuning prompts (every tuning file)."),
    show_misses: bool = typer.Option(False, "--misses",
                                     help="List the tuning prompts the per-turn hook missed "
                                          "(held-out prompts are never listed)."),
    model: str | None = ModelOption,
    no_hybrid: bool = NoHybridOption,
) -> None:
    """Score the coding-memory benchmark: a scripted project history and labelled prompts.

    Reports recall@3 (what the per-turn hook injects), recall@10 (ctx_search), supersession
    correctness, injection precision on unanswerable prompts, tokens injected per prompt and
    p50 query time — for each tuning file and the held-out prompts separately.
    """
    from agentctx.benchmarks import coding, coding_data  # late: 7 ms at every CLI start

    if held_out_only and tuning_only:
        fail("--held-out-only and --tuning-only exclude each other")
    if show_misses and held_out_only:
        fail("--misses lists tuning prompts only; drop --held-out-only")
    splits = (("held-out",) if held_out_only else coding_data.TUNING_SPLITS if tuning_only
              else tuple(coding_data.SPLIT_FILES))
    try:
        report = coding.run(splits=splits, model_path=model, hybrid=not no_hybrid)
    except coding_data.DataError as exc:
        fail(f"benchmark data: {exc}")
    if json_output:
        print_json(coding.to_json(report, with_misses=show_misses))
        return
    typer.echo(coding.render(report))
    if show_misses:
        typer.echo("\ntuning misses (per-turn hook):\n" + coding.misses(report))


@bench_app.command("longmemeval")
def longmemeval_command(
    data: str | None = typer.Option(None, "--data", metavar="PATH",
                                    help="A LongMemEval_S JSON file (default: the 34-question "
                                         "subset in ../shared/data/longmemeval when present)."),
    limit: int | None = typer.Option(None, "--limit", min=1,
                                     help="Score only the first N questions."),
    json_output: bool = JsonOption,
    model: str | None = ModelOption,
    no_hybrid: bool = NoHybridOption,
) -> None:
    """Score LongMemEval_S retrieval: per-turn hook, hybrid ctx_search and a plain FTS5 baseline.

    One fresh store per question, each turn one record. Reports session-level recall_any@3/5/10,
    turn-level recall and p50 query time per configuration, and the abstention questions.
    """
    from agentctx.benchmarks import longmemeval  # late: 7 ms at every CLI start

    try:
        path = longmemeval.find_data(data)
    except longmemeval.DataMissing as exc:
        fail(str(exc))

    def progress(number: int, total: int, question_id: str) -> None:
        _progress_line(f"question {number}/{total} ({question_id})")

    try:
        report = longmemeval.run(path, limit=limit, model_path=model, hybrid=not no_hybrid,
                                 progress=progress)
    except longmemeval.BadData as exc:
        fail(f"{path}: {exc}")
    finally:
        _progress_line("")
    if json_output:
        print_json(longmemeval.to_json(report))
        return
    typer.echo(longmemeval.render(report))


@bench_app.command("projects")
def projects_command(
    held_out: bool = typer.Option(False, "--held-out",
                                  help="Score the held-out prompts (score them once, at the end; "
                                       "they are never studied)."),
    project: list[str] = typer.Option([], "--project", "-p", metavar="NAME",
                                      help="Only this evaluation project (repeatable)."),
    show_misses: bool = typer.Option(False, "--misses",
                                     help="List the tuning prompts the hook got wrong."),
    json_output: bool = JsonOption,
    model: str | None = ModelOption,
) -> None:
    """Score the per-prompt judgement on the evaluation projects (a mobile app, a data pipeline,
    an infrastructure repository), before and after consolidation.

    Reports, with 95% Wilson intervals: unanswerable prompts with no full record and with
    nothing injected, the tokens injected on them, recall@3 (in full or as a pointer, and in full
    only) by prompt kind, and supersession (the record now in force injected; older versions
    never).
    """
    from agentctx.benchmarks import coding_data  # late: 7 ms at every CLI start
    from agentctx.benchmarks import eval_judgement as judgement  # late: 7 ms at every CLI start

    if show_misses and held_out:
        fail("--misses lists tuning prompts only; drop --held-out")

    def progress(name: str, done: int, total: int) -> None:
        _progress_line(f"{name}: prompt {done}/{total}")

    try:
        report = judgement.run(split="held-out" if held_out else "tuning", names=project,
                               model_path=model, progress=progress)
    except coding_data.DataError as exc:
        fail(f"benchmark data: {exc}")
    finally:
        _progress_line("")
    if json_output:
        print_json(judgement.to_json(report))
        return
    typer.echo(judgement.render(report))
    if show_misses:
        typer.echo("\ntuning misses (consolidated):\n" + judgement.misses(report))


def register(app: typer.Typer) -> None:
    """Add ``agentctx bench`` to the CLI."""
    app.add_typer(bench_app, name="bench")


def _progress_line(text: str) -> None:
    """Show ``text`` on one line of a terminal's stderr, over the previous one ("" clears it)."""
    if sys.stderr.isatty():
        sys.stderr.write("\r" + " " * 60 + "\r" + (f"{text}   " if text else ""))
        sys.stderr.flush()
