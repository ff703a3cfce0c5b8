# Image for web, worker and beat (see docker-compose.yml).
FROM python:3.11-slim-bookworm
# Java runs the Spark driver for the metrics aggregation job.
RUN apt-get update \
    && apt-get install -y --no-install-recommends openjdk-17-jre-headless procps \
    && rm -rf /var/lib/apt/lists/*
WORKDIR /app
# The runtime set only (no test or dev tools), every file checked against its hash.
COPY requirements.txt .
RUN pip install --no-cache-dir --require-hashes -r requirements.txt
COPY . .
ENV DJANGO_SETTINGS_MODULE=balancer_site.settings PYTHONUNBUFFERED=1
RUN DJANGO_SECRET_KEY=build-only python manage.py collectstatic --noinput
EXPOSE 8000
CMD ["daphne", "-b", "0.0.0.0", "-p", "8000", "balancer_site.asgi:application"]
