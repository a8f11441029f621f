"""The Celery app of test_lua_celery.py, imported both by the test and by the
worker it starts (`celery -A celery_lua_app worker`): broker and result
backend are the URLs in MINIKV_CELERY_BROKER and MINIKV_CELERY_BACKEND."""

import os

from celery import Celery

app = Celery(
    "celery_lua_app",
    broker=os.environ.get("MINIKV_CELERY_BROKER", "redis://127.0.0.1:6379/0"),
    backend=os.environ.get("MINIKV_CELERY_BACKEND", "redis://127.0.0.1:6379/1"),
)
app.conf.update(
    task_serializer="json",
    result_serializer="json",
    accept_content=["json"],
    # Acknowledge after the task ran: the message sits in kombu's unacked
    # hash meanwhile, the state its Lua-locked restore pass looks at.
    task_acks_late=True,
    worker_prefetch_multiplier=1,
    broker_connection_retry_on_startup=False,
    broker_connection_max_retries=0,
    broker_transport_options={"socket_timeout": 10, "socket_connect_timeout": 5},
    result_backend_transport_options={"socket_timeout": 10, "socket_connect_timeout": 5},
    redis_socket_timeout=10,
    redis_socket_connect_timeout=5,
    worker_hijack_root_logger=False,
)


@app.task
def add(x, y):
    return x + y


@app.task
def echo(value):
    return value


@app.task
def total(values):
    return sum(values)


@app.task
def fail(message):
    raise ValueError(message)
