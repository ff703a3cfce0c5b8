# The two commands: `make run` (the product on embedded defaults) and `make test`.
.PHONY: run stop test bootstrap lint bench

run:
	scripts/run

stop:
	scripts/stop

test:
	scripts/test

bootstrap:
	scripts/bootstrap

lint:
	.venv/bin/ruff check .
	.venv/bin/lint-imports
	.venv/bin/ruff format --check .

bench:
	.venv/bin/python bench/bench_planner.py
