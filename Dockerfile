# A GPU image that checks itself: the CUDA 12.8 runtime, a torch built for CUDA 12.8,
# and envcheck as its HEALTHCHECK. Build from the repository root:
#   docker build -t torch-envcheck .
#   docker run --gpus all --shm-size=8g torch-envcheck            # envcheck check
#   docker run --gpus all --shm-size=8g torch-envcheck envcheck smoke
# tests/test_dockerfile.py keeps TORCH_VARIANT's CUDA equal to the base image's and lints this file.
FROM nvidia/cuda:12.8.1-runtime-ubuntu24.04

ARG TORCH_VERSION=2.10.0
ARG TORCH_VARIANT=cu128

ENV DEBIAN_FRONTEND=noninteractive \
    PIP_NO_CACHE_DIR=1 \
    PIP_DISABLE_PIP_VERSION_CHECK=1 \
    PYTHONDONTWRITEBYTECODE=1 \
    PYTHONUNBUFFERED=1 \
    VIRTUAL_ENV=/opt/venv \
    PATH=/opt/venv/bin:$PATH

# Ubuntu's python3 (3.12 on 24.04) and a user to run as; apt versions follow the base image.
# hadolint ignore=DL3008
RUN apt-get update \
 && apt-get install -y --no-install-recommends python3 python3-venv \
 && rm -rf /var/lib/apt/lists/* \
 && useradd --create-home --uid 10001 envcheck

# torch first, from the index of the variant that matches the base image's CUDA.
RUN python3 -m venv "$VIRTUAL_ENV" \
 && pip install --no-cache-dir "torch==${TORCH_VERSION}" --index-url "https://download.pytorch.org/whl/${TORCH_VARIANT}"

COPY pyproject.toml README.md /src/
COPY envcheck /src/envcheck
COPY compat_tables /src/compat_tables
RUN pip install --no-cache-dir /src

# Not root: the user made above (uid 1000 is taken by Ubuntu 24.04's own "ubuntu" user).
USER 10001:10001
WORKDIR /home/envcheck

# Docker marks the container unhealthy after 3 failed checks; it does not restart it.
HEALTHCHECK --interval=30s --timeout=20s --start-period=30s --retries=3 CMD ["envcheck", "healthcheck"]

CMD ["envcheck", "check"]
