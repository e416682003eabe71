# The image a workflow exported by `strata export argo` runs (docs/scale-out.md): the strata
# binary, the interpreters the shipped tools run (Python 3, Node.js, bash), and the project
# at /project, the default --project-dir of the export.
#
#   docker build -t registry.example.com/strata:0.1.0 .
#
# For a project of your own: FROM that image, then COPY your project over /project.

FROM rust:1-slim-bookworm AS build
WORKDIR /src
COPY . .
RUN cargo build --release --locked -p strata

FROM debian:bookworm-slim
RUN apt-get update \
    && apt-get install -y --no-install-recommends python3 nodejs bash ca-certificates \
    && rm -rf /var/lib/apt/lists/*
COPY --from=build /src/target/release/strata /usr/local/bin/strata
WORKDIR /project
COPY tools/ tools/
COPY plans/ plans/
COPY prompts/ prompts/
COPY directives/ directives/
# The project loads in the image: every tool, plan, graph and prompt template is checked.
RUN strata check
CMD ["strata", "--help"]
