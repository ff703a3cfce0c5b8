"""Settings for Kafka Balancer, read from the environment.

Every knob has a default that runs the product on the local dev cluster
(scripts/dev-cluster), so `make run` needs no configuration.
"""

import importlib.util
import ipaddress
import math
import os
from datetime import timedelta
from pathlib import Path

import dj_database_url
from csp.constants import NONCE, NONE, SELF, UNSAFE_INLINE
from environs import Env

BASE_DIR = Path(__file__).resolve().parent.parent

# Typed settings are parsed by environs: a malformed value (METRICS_WINDOW_SECONDS=abc)
# stops the start with an error naming the variable and the type it wants.
env = Env()

DEBUG = env.bool("DJANGO_DEBUG", True)
# The dev default is only usable with DEBUG on; deployments must set their own.
SECRET_KEY = os.environ.get("DJANGO_SECRET_KEY", "")
if not SECRET_KEY:
    if not DEBUG:
        raise RuntimeError("DJANGO_SECRET_KEY must be set when DJANGO_DEBUG is off")
    SECRET_KEY = "dev-only-insecure-key"
ALLOWED_HOSTS = [
    h.strip()
    for h in os.environ.get("DJANGO_ALLOWED_HOSTS", "127.0.0.1,localhost").split(",")
    if h.strip()
]
CSRF_TRUSTED_ORIGINS = [
    o.strip() for o in os.environ.get("DJANGO_CSRF_TRUSTED_ORIGINS", "").split(",") if o.strip()
]

INSTALLED_APPS = [
    "daphne",
    "django.contrib.admin",
    "django.contrib.auth",
    "django.contrib.contenttypes",
    "django.contrib.sessions",
    "django.contrib.messages",
    "django.contrib.staticfiles",
    "channels",
    "django_celery_beat",
    "apps.clusters",
    "apps.metrics",
    "apps.canary",
    "apps.balancer",
    "apps.audit",
    "apps.access",
    "apps.plans",
    "apps.notifications",
    "rest_framework",
    "health_check",
    "drf_spectacular",
    # Swagger UI and Redoc served from this package's static files, not a CDN.
    "drf_spectacular_sidecar",
    # Counts failed sign-ins and locks out who keeps failing (django-axes).
    "axes",
    "apps.dashboard",
    "apps.api",
    "apps.monitoring",
]

MIDDLEWARE = [
    "django.middleware.security.SecurityMiddleware",
    # Content-Security-Policy on every answer (CONTENT_SECURITY_POLICY below).
    "csp.middleware.CSPMiddleware",
    # Serves /static/ (plotly.js included) when DEBUG is off, without a separate web server.
    "whitenoise.middleware.WhiteNoiseMiddleware",
    "django.contrib.sessions.middleware.SessionMiddleware",
    "django.middleware.common.CommonMiddleware",
    "django.middleware.csrf.CsrfViewMiddleware",
    "django.contrib.auth.middleware.AuthenticationMiddleware",
    "django.contrib.messages.middleware.MessageMiddleware",
    "django.middleware.clickjacking.XFrameOptionsMiddleware",
    # Last, as django-axes asks: turns a lockout into its 429 answer.
    "axes.middleware.AxesMiddleware",
]

# --- HTTPS edge (docs/security.md) ------------------------------------------------
# Daphne speaks plain HTTP; TLS ends at a reverse proxy, which tells Django the original
# scheme in a header: "X-Forwarded-Proto: https" (name: value). Set it only when that
# proxy always sets or overwrites the header; empty: every request counts as plain HTTP.
_ssl_header = os.environ.get("DJANGO_SECURE_PROXY_SSL_HEADER", "").strip()
SECURE_PROXY_SSL_HEADER = None
if _ssl_header:
    _name, _colon, _value = _ssl_header.partition(":")
    if not (_colon and _name.strip() and _value.strip()):
        raise RuntimeError(
            "DJANGO_SECURE_PROXY_SSL_HEADER must read 'Header-Name: value', "
            "e.g. 'X-Forwarded-Proto: https'"
        )
    SECURE_PROXY_SSL_HEADER = ("HTTP_" + _name.strip().upper().replace("-", "_"), _value.strip())
SECURE_SSL_REDIRECT = env.bool("DJANGO_SECURE_SSL_REDIRECT", False)
# Probes and Prometheus reach the processes directly, inside the deployment, over HTTP.
SECURE_REDIRECT_EXEMPT = [r"^healthz$", r"^readyz$", r"^health/", r"^metrics$"]
SECURE_HSTS_SECONDS = env.int("DJANGO_SECURE_HSTS_SECONDS", 0)
SECURE_HSTS_INCLUDE_SUBDOMAINS = env.bool("DJANGO_SECURE_HSTS_INCLUDE_SUBDOMAINS", False)
SECURE_HSTS_PRELOAD = env.bool("DJANGO_SECURE_HSTS_PRELOAD", False)
# Session and CSRF cookies only over HTTPS.
SESSION_COOKIE_SECURE = CSRF_COOKIE_SECURE = env.bool("DJANGO_SECURE_COOKIES", False)
# Scripts and styles from our own origin, or inline with this response's nonce; nothing
# inline otherwise (no handlers, no style attributes), no eval. 'self' in connect-src
# covers fetch and the same-origin websockets. Plotly writes its CSS rules into the
# nonce'd <style id="plotly.js-style-global"> of templates/base.html.
CONTENT_SECURITY_POLICY = {
    "DIRECTIVES": {
        "default-src": [SELF],
        "script-src": [SELF, NONCE],
        "style-src": [SELF, NONCE],
        # Style attributes only (no <style>, no stylesheet from elsewhere): Plotly and
        # Swagger UI set them from script and an attribute cannot carry a nonce. They
        # cannot run script, and img-src/font-src keep them from loading anything foreign.
        "style-src-attr": [UNSAFE_INLINE],
        "img-src": [SELF, "data:"],
        "font-src": [SELF],
        "connect-src": [SELF],
        # Redoc runs its search in a worker made from a blob.
        "worker-src": [SELF, "blob:"],
        "object-src": [NONE],
        "base-uri": [SELF],
        "form-action": [SELF],
        "frame-ancestors": [NONE],
    }
}

ROOT_URLCONF = "balancer_site.urls"

TEMPLATES = [
    {
        "BACKEND": "django.template.backends.django.DjangoTemplates",
        "DIRS": [BASE_DIR / "templates"],
        "APP_DIRS": True,
        "OPTIONS": {
            "context_processors": [
                "django.template.context_processors.request",
                "django.contrib.auth.context_processors.auth",
                "django.contrib.messages.context_processors.messages",
                "apps.dashboard.perms.granted",
            ],
        },
    },
]

WSGI_APPLICATION = "balancer_site.wsgi.application"
ASGI_APPLICATION = "balancer_site.asgi.application"

# SQLite by default; DATABASE_URL (e.g. postgres://user:pass@host:5432/db) overrides.
DATABASES = {
    "default": dj_database_url.config(
        env="DATABASE_URL",
        default=f"sqlite:///{BASE_DIR / 'db.sqlite3'}",
        conn_max_age=env.int("DATABASE_CONN_MAX_AGE", 0),
    )
}
if DATABASES["default"]["ENGINE"] == "django.db.backends.sqlite3":
    # Web, worker and beat share one SQLite file: wait for locks instead of failing.
    # IMMEDIATE: a transaction takes the write lock when it begins, so it waits (up to
    # the timeout) for another writer; begun as a reader, its first write would fail at
    # once with "database is locked" while another holds the lock (an aggregation
    # behind a running sync would lose its windows that way).
    # WAL: readers never wait for the writer, nor the writer for readers (one writer at
    # a time still); the journal mode is the file's, set on every connection in case a
    # copy of the file comes without it.
    DATABASES["default"].setdefault("OPTIONS", {}).update(
        timeout=20, transaction_mode="IMMEDIATE", init_command="PRAGMA journal_mode=WAL;"
    )

AUTH_PASSWORD_VALIDATORS = [
    {"NAME": "django.contrib.auth.password_validation.MinimumLengthValidator"},
]
# Sign-in abuse (docs/security.md): django-axes checks every authentication (the sign-in
# page, the admin, the API's token endpoint) first. After SIGNIN_FAILURE_LIMIT failures in
# a row for one username from one address, that pair is refused (429) for
# SIGNIN_LOCKOUT_MINUTES; the same name from another address is not; a success resets the
# count. Over all addresses, a name with SIGNIN_USERNAME_FAILURE_LIMIT failures in the
# current and previous SIGNIN_WINDOW_MINUTES window gets one attempt per
# SIGNIN_USERNAME_DELAY_SECONDS (apps/audit/signin.py). Lockouts are audited when they
# begin; failures once per window, as counts.
AUTHENTICATION_BACKENDS = [
    "axes.backends.AxesStandaloneBackend",
    # Passwords sign in; permissions come from per-cluster grants only (apps/access).
    "apps.access.backends.PasswordBackend",
    "apps.access.backends.GrantBackend",
]
AXES_HANDLER = "apps.audit.axes_handler.SigninHandler"
AXES_FAILURE_LIMIT = env.int("SIGNIN_FAILURE_LIMIT", 5)
AXES_COOLOFF_TIME = timedelta(minutes=env.float("SIGNIN_LOCKOUT_MINUTES", 15.0))
AXES_LOCKOUT_PARAMETERS = [["username", "ip_address"]]
AXES_RESET_ON_SUCCESS = True
# Attempts refused during a lockout neither count nor prolong it (nor are audited).
AXES_RESET_COOL_OFF_ON_FAILURE_DURING_LOCKOUT = False
AXES_VERBOSE = False
# The address lockouts and the audit trail see (apps/core/client_address.py).
AXES_CLIENT_IP_CALLABLE = "apps.core.client_address.client_address_for_axes"
SIGNIN_USERNAME_FAILURE_LIMIT = env.int("SIGNIN_USERNAME_FAILURE_LIMIT", 10)
SIGNIN_USERNAME_DELAY_SECONDS = env.float("SIGNIN_USERNAME_DELAY_SECONDS", 60.0)
SIGNIN_WINDOW_MINUTES = env.float("SIGNIN_WINDOW_MINUTES", 15.0)
# Reverse proxies in front of Daphne that append the address they saw to
# X-Forwarded-For. 0: the socket's peer address only, X-Forwarded-For ignored (anyone
# can write it). Set it to exactly the number of proxies, and let nothing reach Daphne
# around them.
TRUSTED_PROXIES = env.int("TRUSTED_PROXIES", 0)
if TRUSTED_PROXIES < 0:
    raise RuntimeError("TRUSTED_PROXIES must be 0 or more")
LOGIN_URL = "login"
LOGIN_REDIRECT_URL = "dashboard:clusters"
LOGOUT_REDIRECT_URL = "login"

# Local accounts (password sign-in: page, admin, API token); off once single sign-on is
# trusted, the break-glass path closed: the form is hidden and passwords are refused.
LOCAL_SIGN_IN = env.bool("LOCAL_SIGN_IN", True)
# Single sign-on with OpenID Connect (mozilla-django-oidc, apps/access/oidc_backend.py),
# on when a client id is set. Grants follow the group claim: OIDC_GROUP_GRANTS is
# "group=role@cluster" items, comma-separated (cluster: a name, or * for all).
OIDC_RP_CLIENT_ID = os.environ.get("OIDC_RP_CLIENT_ID", "")
OIDC_RP_CLIENT_SECRET = os.environ.get("OIDC_RP_CLIENT_SECRET", "")
OIDC_OP_AUTHORIZATION_ENDPOINT = os.environ.get("OIDC_OP_AUTHORIZATION_ENDPOINT", "")
OIDC_OP_TOKEN_ENDPOINT = os.environ.get("OIDC_OP_TOKEN_ENDPOINT", "")
OIDC_OP_USER_ENDPOINT = os.environ.get("OIDC_OP_USER_ENDPOINT", "")
OIDC_OP_JWKS_ENDPOINT = os.environ.get("OIDC_OP_JWKS_ENDPOINT", "")
OIDC_RP_SIGN_ALGO = os.environ.get("OIDC_RP_SIGN_ALGO", "RS256")
OIDC_RP_SCOPES = os.environ.get("OIDC_RP_SCOPES", "openid email profile groups")
OIDC_USERNAME_CLAIM = os.environ.get("OIDC_USERNAME_CLAIM", "preferred_username")
OIDC_GROUPS_CLAIM = os.environ.get("OIDC_GROUPS_CLAIM", "groups")
OIDC_GROUP_GRANTS = os.environ.get("OIDC_GROUP_GRANTS", "")
SSO_ENABLED = bool(OIDC_RP_CLIENT_ID)
LOGIN_REDIRECT_URL_FAILURE = "/accounts/login/?sso=failed"
if SSO_ENABLED:
    AUTHENTICATION_BACKENDS.insert(1, "apps.access.oidc_backend.GrantingOIDCBackend")

LANGUAGE_CODE = "en-us"
TIME_ZONE = "UTC"
USE_I18N = False
USE_TZ = True

STATIC_URL = "static/"
STATICFILES_DIRS = [
    BASE_DIR / "static",
    # plotly.js from the installed plotly package, as static/plotly/plotly.min.js: no CDN.
    ("plotly", Path(importlib.util.find_spec("plotly").origin).parent / "package_data"),
]
STATIC_ROOT = BASE_DIR / ".run" / "staticfiles"
DEFAULT_AUTO_FIELD = "django.db.models.BigAutoField"

# --- Redis: Celery broker and Channels layer -------------------------------
REDIS_URL = os.environ.get("REDIS_URL", "redis://127.0.0.1:6379/0")

CHANNEL_LAYERS = {
    "default": {
        "BACKEND": "channels_redis.core.RedisChannelLayer",
        # redis-py 8 reads with a 5 s socket timeout by default, shorter than the
        # layer's blocking BZPOPMIN: every idle websocket would drop each 5 s.
        "CONFIG": {"hosts": [{"address": REDIS_URL, "socket_timeout": None}]},
    }
}

CELERY_BROKER_URL = os.environ.get("CELERY_BROKER_URL", REDIS_URL)
CELERY_RESULT_BACKEND = None
CELERY_TASK_IGNORE_RESULT = True
CELERY_TASK_ALWAYS_EAGER = env.bool("CELERY_TASK_ALWAYS_EAGER", False)
CELERY_BEAT_SCHEDULER = "balancer_site.beat:LeaderDatabaseScheduler"
# Beats may run two or more: the one holding this Redis lock sends; the others ask every
# quarter of it and take over within this many seconds of its death. Under the sync
# interval, so a leader's death delays no sync by a whole interval.
BEAT_LEADER_LOCK_SECONDS = env.float("BEAT_LEADER_LOCK_SECONDS", 6.0)
CELERY_TIMEZONE = TIME_ZONE
# A Spark aggregation holds its worker for long: it gets a queue (and a worker)
# of its own so syncs, samples and executions never wait behind it. Cluster I/O (syncs,
# samples) has its own queue too, so a slow cluster never delays a plan's execution;
# everything else (plans, detection, notifications) stays on the default `celery` queue.
CELERY_TASK_ROUTES = {
    "apps.metrics.tasks.metrics_aggregate_task": {"queue": "aggregation"},
    "apps.metrics.tasks.metrics_sample_*": {"queue": "clusters"},
    "apps.clusters.tasks.*": {"queue": "clusters"},
    "apps.canary.tasks.*": {"queue": "clusters"},
}

# --- Kafka ------------------------------------------------------------------
# The cluster registered on first start (make run / manage.py demo_setup).
KAFKA_BOOTSTRAP_SERVERS = os.environ.get(
    "KAFKA_BOOTSTRAP_SERVERS", "127.0.0.1:29091,127.0.0.1:29092,127.0.0.1:29093"
)
KAFKA_DEFAULT_CLUSTER_NAME = os.environ.get("KAFKA_DEFAULT_CLUSTER_NAME", "demo")
# Seconds an admin request may take before the cluster counts as unreachable.
KAFKA_REQUEST_TIMEOUT = env.float("KAFKA_REQUEST_TIMEOUT", 10.0)
# Seconds to set up a connection (TCP, TLS, SASL): short, so a dead address fails fast.
KAFKA_CONNECT_TIMEOUT = env.float("KAFKA_CONNECT_TIMEOUT", 5.0)
# An unreachable cluster is retried after 1x, 2x, 4x ... this many seconds, at most
# CLUSTER_BACKOFF_MAX apart; its syncs and samples are not scheduled in between.
CLUSTER_BACKOFF_INITIAL = env.float("CLUSTER_BACKOFF_INITIAL", 10.0)
CLUSTER_BACKOFF_MAX = env.float("CLUSTER_BACKOFF_MAX", 300.0)
# A round's lease on its cluster, renewed every third of it while the round runs; a
# killed round blocks the next ones of its kind for at most this long. Well under the
# sync interval, so a sync after a killed one starts within the interval.
CLUSTER_ROUND_LEASE_SECONDS = env.float("CLUSTER_ROUND_LEASE_SECONDS", 6.0)
# The admin user demo_setup makes sure of; without a password it generates one once.
BALANCER_ADMIN_USER = os.environ.get("BALANCER_ADMIN_USER", "admin")
BALANCER_ADMIN_PASSWORD = os.environ.get("BALANCER_ADMIN_PASSWORD", "")

# --- Periodic work (seconds) ---------------------------------------------------
CLUSTER_SYNC_INTERVAL = env.float("CLUSTER_SYNC_INTERVAL", 10.0)
# How often beat sends the sync fan-out: a quarter interval in whole seconds (beat keeps
# whole seconds), so a sync lost with its worker is made up a tick later.
CLUSTER_SYNC_TICK = max(1, int(CLUSTER_SYNC_INTERVAL // 4))
METRICS_SAMPLE_INTERVAL = env.float("METRICS_SAMPLE_INTERVAL", 10.0)
METRICS_TOPIC = os.environ.get("METRICS_TOPIC", "__balancer_metrics")
# The metrics topic is created on first use with these (and min(3, alive brokers) replicas).
METRICS_TOPIC_PARTITIONS = env.int("METRICS_TOPIC_PARTITIONS", 6)
METRICS_TOPIC_RETENTION_MS = env.int("METRICS_TOPIC_RETENTION_MS", 24 * 3600 * 1000)

# Aggregation windows: their length, how far they slide (a divisor of the length;
# equal = tumbling), how many are kept, and how often Spark runs (the slide: each run
# stores the window that just closed, docs/metrics.md).
METRICS_WINDOW_SECONDS = env.int("METRICS_WINDOW_SECONDS", 60)
METRICS_WINDOW_SLIDE_SECONDS = env.int("METRICS_WINDOW_SLIDE_SECONDS", 10)
METRICS_WINDOWS_KEPT = env.int("METRICS_WINDOWS_KEPT", 60)
# Of those, the newest windows that keep a row per partition (older ones keep their
# per-broker totals only): per-partition rows are what grows with the cluster.
METRICS_PARTITION_WINDOWS_KEPT = env.int("METRICS_PARTITION_WINDOWS_KEPT", 6)
METRICS_AGGREGATE_INTERVAL = env.float("METRICS_AGGREGATE_INTERVAL", 10.0)
# Also aggregate as soon as a sample round is flushed: the window it completed is stored
# one Spark run after the round instead of up to one interval later (docs/metrics.md).
METRICS_AGGREGATE_AFTER_SAMPLE = env.bool("METRICS_AGGREGATE_AFTER_SAMPLE", True)
# The aggregation worker keeps one SparkSession warm (memory it holds) instead of paying a
# JVM start and JIT warm-up every minute with spark-submit: a run takes about half
# the time (bench/results/2026-11-24.md). Off: a fresh spark-submit per run.
METRICS_AGGREGATION_IN_PROCESS = env.bool("METRICS_AGGREGATION_IN_PROCESS", True)
# In that warm session, keep the samples parsed by earlier runs (persisted) and read from
# Kafka only the records since the last run; off: every run re-reads one window length.
METRICS_SAMPLES_KEPT_IN_SESSION = env.bool("METRICS_SAMPLES_KEPT_IN_SESSION", True)
# A run still running after this many seconds is taken for dead (and a spark-submit killed).
METRICS_AGGREGATION_TIMEOUT = env.float("METRICS_AGGREGATION_TIMEOUT", 900.0)
METRICS_RUNS_KEPT_DAYS = env.int("METRICS_RUNS_KEPT_DAYS", 7)

# --- Canary (apps/canary) ------------------------------------------------------
# A topic with one partition led by each broker, written with acks=all and read back
# every CANARY_INTERVAL seconds: what a client of each broker feels.
CANARY_ENABLED = env.bool("CANARY_ENABLED", True)
CANARY_TOPIC = os.environ.get("CANARY_TOPIC", "__balancer_canary")
CANARY_INTERVAL = env.float("CANARY_INTERVAL", 5.0)
# Records per broker per round (its p99 is the worst of them below 100 records).
CANARY_RECORDS = env.int("CANARY_RECORDS", 10)
# Seconds a round waits for its records to be acknowledged and read back.
CANARY_TIMEOUT = env.float("CANARY_TIMEOUT", 4.0)
CANARY_RETENTION_HOURS = env.float("CANARY_RETENTION_HOURS", 6.0)
# A broker's canary band (apps/canary/band.py): its produce p99 may reach
# max(baseline x FACTOR, FLOOR_MS); STRIKES rounds in a row above it put it out.
CANARY_BAND_FACTOR = env.float("CANARY_BAND_FACTOR", 2.0)
CANARY_BAND_FLOOR_MS = env.float("CANARY_BAND_FLOOR_MS", 50.0)
CANARY_BAND_STRIKES = env.int("CANARY_BAND_STRIKES", 2)
CANARY_BASELINE_MINUTES = env.float("CANARY_BASELINE_MINUTES", 30.0)
# Slow-broker healing (apps/canary/slowness.py): rounds in a row a broker must be the
# canary's slow one before it is reported (and to be cleared), and how many times the
# mean leadership count a broker may lead for its load not to explain it.
CANARY_SLOW_ROUNDS = env.int("CANARY_SLOW_ROUNDS", 6)
CANARY_SLOW_LOAD_FACTOR = env.float("CANARY_SLOW_LOAD_FACTOR", 1.5)
# The adaptive throttle (apps/plans/services/throttle_auto.py), bytes/s: where a run
# starts, what each canary round within the objective adds, how low a halving goes.
THROTTLE_AUTO_START = env.int("THROTTLE_AUTO_START", 5_000_000)
THROTTLE_AUTO_STEP = env.int("THROTTLE_AUTO_STEP", 5_000_000)
THROTTLE_AUTO_MIN = env.int("THROTTLE_AUTO_MIN", 1_000_000)
# Canary rounds in a row outside the objective before the adaptive throttle halves.
THROTTLE_AUTO_MISSES = env.int("THROTTLE_AUTO_MISSES", 2)

# --- Plans: detection and execution -------------------------------------------
# Defaults of a new cluster policy (each cluster's policy is edited on its dashboard page).
PLAN_DETECTION_INTERVAL = env.float("PLAN_DETECTION_INTERVAL", 60.0)
PLAN_DEAD_BROKER_GRACE = env.float("PLAN_DEAD_BROKER_GRACE", 60.0)
# How often beat looks for clusters whose detection interval has elapsed.
PLAN_DETECTION_TICK = env.float("PLAN_DETECTION_TICK", 10.0)
# An open proposal awaiting a human holds still: while the cluster it was made for is
# unchanged, detection replaces it only after it has been open this long, and only by a
# plan better by this share on the first goal where the two differ (docs/lifecycle.md).
PLAN_PROPOSAL_HOLD_SECONDS = env.float("PLAN_PROPOSAL_HOLD_SECONDS", 600.0)
PLAN_PROPOSAL_BETTER_MARGIN = env.float("PLAN_PROPOSAL_BETTER_MARGIN", 0.10)
# A rebalance that would move partitions no load window has measured yet (a new topic,
# or no window at all) waits this long for their loads, so it is not made on counts alone.
PLAN_LOADS_WAIT_SECONDS = env.float("PLAN_LOADS_WAIT_SECONDS", 60.0)
EXECUTOR_MAX_MOVES_PER_BROKER = env.int("EXECUTOR_MAX_MOVES_PER_BROKER", 5)
EXECUTOR_MAX_MOVES_CLUSTER = env.int("EXECUTOR_MAX_MOVES_CLUSTER", 20)
# JBOD: moves between the log dirs of one broker running at once on each broker.
EXECUTOR_DISK_MOVES_PER_BROKER = env.int("EXECUTOR_DISK_MOVES_PER_BROKER", 1)
# JBOD: copies between dirs on one broker at a time (CC issue 2237).
EXECUTOR_DISK_BROKER_BY_BROKER = env.bool("EXECUTOR_DISK_BROKER_BY_BROKER", False)
EXECUTOR_DEFAULT_THROTTLE = env.int("EXECUTOR_DEFAULT_THROTTLE", 50_000_000)  # bytes/s
EXECUTOR_POLL_INTERVAL = env.float("EXECUTOR_POLL_INTERVAL", 2.0)
# A worker holding no fresh lease for this long is presumed dead; another resumes.
EXECUTOR_LEASE_SECONDS = env.float("EXECUTOR_LEASE_SECONDS", 60.0)
EXECUTOR_RESUME_INTERVAL = env.float("EXECUTOR_RESUME_INTERVAL", 30.0)
# A move whose target broker is dead this long can't finish: it is cancelled in Kafka and
# failed, so the plan ends and self-healing can follow (a restart should fit in it).
EXECUTOR_DEAD_TARGET_GRACE = env.float("EXECUTOR_DEAD_TARGET_GRACE", 20.0)
# A move whose copied bytes have not grown for this long is cancelled and failed.
EXECUTOR_STALL_TIMEOUT = env.float("EXECUTOR_STALL_TIMEOUT", 600.0)

# --- Spark -------------------------------------------------------------------
SPARK_MASTER = os.environ.get("SPARK_MASTER", "local[*]")
# Extra spark-submit flags, e.g. "--executor-memory 4g" (METRICS_AGGREGATION_IN_PROCESS off).
SPARK_SUBMIT_OPTIONS = os.environ.get("SPARK_SUBMIT_OPTIONS", "")
SPARK_DRIVER_MEMORY = os.environ.get("SPARK_DRIVER_MEMORY", "2g")
SPARK_SHUFFLE_PARTITIONS = env.int("SPARK_SHUFFLE_PARTITIONS", 8)
SPARK_LOG_LEVEL = os.environ.get("SPARK_LOG_LEVEL", "WARN")
# The balancer's share of a shared Spark cluster (standalone, YARN, Kubernetes): at most
# this many cores (0: whatever the master offers) and this much memory per executor
# (empty: Spark's default), in-process and under spark-submit alike.
SPARK_CORES_MAX = env.int("SPARK_CORES_MAX", 0)
SPARK_EXECUTOR_MEMORY = os.environ.get("SPARK_EXECUTOR_MEMORY", "")
# With a master that is not local[...], the worker's warm session is stopped after each
# run, so its executors (and cores) go back to the cluster between runs; the driver JVM
# stays warm. Off: the session keeps them (e.g. with dynamic allocation configured).
SPARK_RELEASE_BETWEEN_RUNS = env.bool("SPARK_RELEASE_BETWEEN_RUNS", True)
# Where executors reach the driver (spark.driver.host) and what the driver binds to
# (spark.driver.bindAddress), for a driver behind NAT or in a container. Empty: Spark's
# choice (the host's address), or loopback for a local[...] master.
SPARK_DRIVER_HOST = os.environ.get("SPARK_DRIVER_HOST", "")
SPARK_DRIVER_BIND_ADDRESS = os.environ.get("SPARK_DRIVER_BIND_ADDRESS", "")
# Where the Kafka source jars are fetched to (spark_jobs/connector/pom.xml).
SPARK_KAFKA_JARS_DIR = Path(
    os.environ.get("SPARK_KAFKA_JARS_DIR", BASE_DIR / ".cache" / "spark-jars")
)

LOGGING = {
    "version": 1,
    "disable_existing_loggers": False,
    "handlers": {"console": {"class": "logging.StreamHandler"}},
    "root": {"handlers": ["console"], "level": os.environ.get("LOG_LEVEL", "INFO")},
    # kafka-python logs every connection at INFO.
    "loggers": {"django.db.backends": {"level": "WARNING"}, "kafka": {"level": "WARNING"}},
}


# --- Monitoring (apps/monitoring) ------------------------------------------------
# Beat sends a heartbeat this often; /health/ fails when none ran within 3 of them.
MONITORING_HEARTBEAT_INTERVAL = env.float("MONITORING_HEARTBEAT_INTERVAL", 15.0)
# /health/ fails a cluster whose last good sync is older than this.
MONITORING_SYNC_AGE_MAX = env.float("MONITORING_SYNC_AGE_MAX", 60.0)
# When set, /metrics answers only `Authorization: Bearer <METRICS_TOKEN>`.
METRICS_TOKEN = os.environ.get("METRICS_TOKEN", "")


def beat_entry(task: str, every: float) -> dict:
    """A beat entry whose message expires when the next one is due.

    A fan-out still queued by then is dropped by the worker, not piled up behind the
    next one; django-celery-beat turns `expire_seconds` into the message's `expires`.
    """
    # django-celery-beat keeps an interval in whole seconds, and an entry of 0 stops
    # beat from sending anything: at least a second, in whole seconds.
    every = max(1, math.floor(every))
    return {"task": task, "schedule": every, "options": {"expire_seconds": every}}


# Periodic tasks; django-celery-beat copies these into its tables on start, where
# operators can pause or retune them in the admin.
CELERY_BEAT_SCHEDULE = {
    # Every half interval: the fan-out syncs the clusters due (clusters.tasks).
    "clusters-sync": beat_entry("apps.clusters.tasks.clusters_sync_all", CLUSTER_SYNC_INTERVAL / 2),
    "metrics-sample": beat_entry("apps.metrics.tasks.metrics_sample_all", METRICS_SAMPLE_INTERVAL),
    "metrics-aggregate": beat_entry(
        "apps.metrics.tasks.metrics_aggregate_all", METRICS_AGGREGATE_INTERVAL
    ),
    "canary-probe": beat_entry("apps.canary.tasks.canary_probe_all", CANARY_INTERVAL),
    "plans-detect": beat_entry("apps.plans.tasks.plans_detect_all", PLAN_DETECTION_TICK),
    "plans-executions-resume": beat_entry(
        "apps.plans.tasks.executions_resume", EXECUTOR_RESUME_INTERVAL
    ),
    "monitoring-beat-heartbeat": beat_entry(
        "apps.monitoring.tasks.beat_heartbeat", MONITORING_HEARTBEAT_INTERVAL
    ),
    # Closed sign-in failure windows into the audit trail, a few times per window.
    "audit-signin-failures": beat_entry(
        "apps.audit.tasks.signin_failures_summarize", SIGNIN_WINDOW_MINUTES * 60 / 3
    ),
}

# --- REST API (apps/api) -------------------------------------------------------
REST_FRAMEWORK = {
    # Token first, so an anonymous call gets 401 with WWW-Authenticate rather than 403.
    "DEFAULT_AUTHENTICATION_CLASSES": [
        "apps.api.authentication.DigestTokenAuthentication",
        "rest_framework.authentication.SessionAuthentication",
    ],
    "DEFAULT_PERMISSION_CLASSES": ["apps.api.permissions.CanViewClusters"],
    # Bounded: a body over API_MAX_BODY_BYTES or nested too deep is a 400 (apps/api/common).
    "DEFAULT_PARSER_CLASSES": [
        "apps.api.common.parsers.BoundedJSONParser",
        "apps.api.common.parsers.BoundedFormParser",
        "apps.api.common.parsers.BoundedMultiPartParser",
    ],
    "DEFAULT_PAGINATION_CLASS": "apps.api.common.pagination.BoundedLimitOffsetPagination",
    "PAGE_SIZE": 100,
    "DEFAULT_SCHEMA_CLASS": "drf_spectacular.openapi.AutoSchema",
}
# The largest request body the API reads (bytes); a larger one is refused with 400.
API_MAX_BODY_BYTES = env.int("API_MAX_BODY_BYTES", 1024 * 1024)
SPECTACULAR_SETTINGS = {
    "TITLE": "Kafka Balancer API",
    "DESCRIPTION": "Clusters, brokers, topics, partitions, loads, plans and the audit trail.",
    "VERSION": "1",
    "SERVE_INCLUDE_SCHEMA": False,
    "SERVE_PERMISSIONS": ["rest_framework.permissions.IsAuthenticated"],
    "SWAGGER_UI_DIST": "SIDECAR",
    "SWAGGER_UI_FAVICON_HREF": "SIDECAR",
    "REDOC_DIST": "SIDECAR",
    # Choice sets sharing a field name get names of their own (not a hash suffix, which
    # `check --deploy` warns about).
    "ENUM_NAME_OVERRIDES": {
        "PlanModeEnum": "apps.plans.models.PlanMode",
        "RequestableModeEnum": "apps.plans.services.operator_requests.REQUESTABLE_MODES",
        "PlanStateEnum": "apps.plans.models.PlanState",
        "MoveStateEnum": "apps.plans.models.MoveState",
        "DeliveryStateEnum": "apps.notifications.models.DeliveryState",
    },
}

# --- Notifications (apps/notifications) ---------------------------------------
# Seconds a webhook POST may take (connect, then read) before it counts as failed.
NOTIFICATIONS_TIMEOUT = env.float("NOTIFICATIONS_TIMEOUT", 5.0)
# The same for the "send test" button, which waits for the answer.
NOTIFICATIONS_TEST_TIMEOUT = env.float("NOTIFICATIONS_TEST_TIMEOUT", 3.0)
# Retries after a failed first attempt (timeouts, connection errors, 408/425/429/5xx),
# waiting NOTIFICATIONS_RETRY_BACKOFF seconds, then doubling, up to the _MAX.
NOTIFICATIONS_MAX_RETRIES = env.int("NOTIFICATIONS_MAX_RETRIES", 6)
NOTIFICATIONS_RETRY_BACKOFF = env.int("NOTIFICATIONS_RETRY_BACKOFF", 10)
NOTIFICATIONS_RETRY_BACKOFF_MAX = env.int("NOTIFICATIONS_RETRY_BACKOFF_MAX", 600)
# The dashboard's address as receivers reach it (e.g. https://balancer.example.com),
# for links in notifications; empty: no links.
NOTIFICATIONS_BASE_URL = os.environ.get("NOTIFICATIONS_BASE_URL", "")
# Networks (comma-separated CIDRs) that webhook and Slack URLs may reach although they
# are internal (loopback, private, link-local...); empty: public addresses only.
NOTIFICATIONS_ALLOWED_NETWORKS = [
    n.strip() for n in os.environ.get("NOTIFICATIONS_ALLOWED_NETWORKS", "").split(",") if n.strip()
]
for _network in NOTIFICATIONS_ALLOWED_NETWORKS:
    try:
        ipaddress.ip_network(_network, strict=False)
    except ValueError:
        raise RuntimeError(
            f"NOTIFICATIONS_ALLOWED_NETWORKS: {_network!r} is not a network (CIDR)"
        ) from None

# --- Secrets at rest -----------------------------------------------------------
# Fernet keys encrypting cluster passwords and TLS keys in the database, comma-separated:
# the first encrypts, all decrypt (rotation: docs/security.md). Empty only with DEBUG on,
# where a dev key derived from SECRET_KEY is used.
BALANCER_SECRET_KEYS = [
    k.strip() for k in os.environ.get("BALANCER_SECRET_KEYS", "").split(",") if k.strip()
]
if not BALANCER_SECRET_KEYS and not DEBUG:
    raise RuntimeError("BALANCER_SECRET_KEYS must be set when DJANGO_DEBUG is off")
