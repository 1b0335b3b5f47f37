"""Estimates the CPU time of Calculon's whole `llm-optimal-execution` search
from a systematic sample of its executions, where the search itself runs
for hours on a small machine.

Calculon's own command runs unchanged over its own enumeration (the same
loops, processes and counts); only the model it builds for each execution
is replaced: one execution in SAMPLE_EVERY is compiled, run and summarised
by Calculon's real `Llm` and timed (process CPU, from `compile` to the
statistics), and the others are refused at once, as Calculon refuses an
execution that does not fit. The estimate is then

    (the whole run's CPU - the sampled executions' CPU)
        + (executions enumerated) x (mean CPU of a sampled execution),

with a 95% interval from the sample's spread. The first term is what
Calculon spends around its model (the enumeration, each execution's JSON
and its `Execution`), measured whole, and slightly over what Calculon's
real run spends there (each refusal formats a log line).

Run by `calculon-search.sh` with SAMPLE_EVERY set; alone:

    python calculon-sample.py EVERY TIMINGS_DIR -- llm-optimal-execution ARGS...
"""

import argparse
import logging
import os
import sys
import time

import calculon
from calculon.llm import Llm

# By its module's name: `calculon.llm` itself is rebound to the `llm.py`
# module by the package's star imports.
search_module = sys.modules['calculon.llm.optimal_execution']

every = int(sys.argv[1])
timings = sys.argv[2]
assert sys.argv[3] == '--'
calculon_args = sys.argv[4:]

# Executions seen by this process (each pool worker counts its own).
seen = [0]


def record(seconds, good):
    with open(os.path.join(timings, f'{os.getpid()}.txt'), 'a') as out:
        out.write(f'{seconds!r} {int(good)}\n')


class Timed(Llm):
    """Calculon's model, timed from compile to its statistics."""

    def compile(self, syst, exe):
        self._t0 = time.process_time()
        try:
            return super().compile(syst, exe)
        except Llm.Error:
            record(time.process_time() - self._t0, False)
            raise

    def run(self, syst):
        try:
            return super().run(syst)
        except Llm.Error:
            record(time.process_time() - self._t0, False)
            raise

    def get_stats_json(self, layers):
        stats = super().get_stats_json(layers)
        record(time.process_time() - self._t0, True)
        return stats


class NotSampled:
    def compile(self, syst, exe):
        raise Llm.Error('not sampled')


class Sampled(Llm):
    """Stands for `Llm` in the search's module: its static methods are
    Calculon's; a new model is Calculon's, timed, one time in `every`."""

    def __new__(cls, app, logger):
        seen[0] += 1
        if seen[0] % every:
            return NotSampled()
        return Timed(app, logger)


search_module.Llm = Sampled

parser = argparse.ArgumentParser()
commands = parser.add_subparsers(dest='command')
commands.required = True
for command_line in calculon.CommandLine.command_lines():
    command_line.create_parser(commands)
args = parser.parse_args(calculon_args)
logger = logging.getLogger()
logger.addHandler(logging.StreamHandler(stream=sys.stdout))
logger.setLevel('INFO')
status = args.func(logger, args)
# Refused executions are what this run reports as "bad"; none is good.
sys.exit(0 if status in (0, -1) else status)
