"""Audit trail pages: a filtered list and CSV / JSON export. Read-only by design."""

from django.contrib.auth.decorators import login_required, permission_required
from django.core.paginator import Paginator
from django.http import HttpRequest, HttpResponse, HttpResponseBadRequest, StreamingHttpResponse
from django.shortcuts import render
from django.utils import timezone
from django.views.decorators.http import require_GET

from .forms import AuditFilterForm
from .selectors import audit_events_csv_lines, audit_events_filter, audit_events_json_chunks

PAGE_SIZE = 100


def _filtered(request: HttpRequest):
    form = AuditFilterForm(request.GET or None)
    if request.GET and not form.is_valid():
        return form, None
    filters = form.cleaned_data if request.GET else {}
    filters = {k: v for k, v in filters.items() if v not in (None, "")}
    return form, audit_events_filter(**filters)


def _bad_filter(form: AuditFilterForm) -> HttpResponse:
    errors = "; ".join(f"{field}: {' '.join(msgs)}" for field, msgs in form.errors.items())
    return HttpResponseBadRequest(f"invalid filter: {errors}\n", content_type="text/plain")


@require_GET
@login_required
@permission_required("audit.view_auditevent", raise_exception=True)
def event_list(request: HttpRequest) -> HttpResponse:
    form, events = _filtered(request)
    if events is None:
        return _bad_filter(form)
    page = Paginator(events, PAGE_SIZE).get_page(request.GET.get("page"))
    query = request.GET.copy()
    query.pop("page", None)
    return render(
        request,
        "audit/list.html",
        {"form": form, "page": page, "query": query.urlencode()},
    )


@require_GET
@login_required
@permission_required("audit.export_auditevent", raise_exception=True)
def event_export(request: HttpRequest, fmt: str) -> HttpResponse:
    form, events = _filtered(request)
    if events is None:
        return _bad_filter(form)
    stamp = timezone.now().strftime("%Y%m%dT%H%M%SZ")
    if fmt == "csv":
        response = StreamingHttpResponse(
            audit_events_csv_lines(events=events.iterator()), content_type="text/csv"
        )
    else:
        response = StreamingHttpResponse(
            audit_events_json_chunks(events=events.iterator()), content_type="application/json"
        )
    response["Content-Disposition"] = f'attachment; filename="audit-{stamp}.{fmt}"'
    return response
