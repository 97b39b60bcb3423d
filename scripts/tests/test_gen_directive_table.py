"""The directive-table generator: command tables, masks and handlers read from C source."""

from __future__ import annotations

from pathlib import Path

import pytest
from gen_directive_table import contexts_of, main, module_label, parse_source, rows_of

# A made-up module in the shape nginx modules declare their directives.
SOURCE = r"""
static char *ngx_http_demo_mode(ngx_conf_t *cf, ngx_command_t *cmd, void *conf);

static ngx_command_t  ngx_http_demo_commands[] = {

    { ngx_string("demo_enable"),
      NGX_HTTP_MAIN_CONF|NGX_HTTP_SRV_CONF|NGX_HTTP_LOC_CONF|NGX_HTTP_LIF_CONF
                        |NGX_CONF_FLAG,
      ngx_conf_set_flag_slot,
      NGX_HTTP_LOC_CONF_OFFSET,
      0,
      NULL },

#if (NGX_DEMO_EXTRA)
    { ngx_string("demo_buffer"),
      NGX_HTTP_MAIN_CONF|NGX_CONF_TAKE12,  /* size [count] */
      ngx_conf_set_size_slot,
      0, 0, NULL },
#endif

    { ngx_string("demo_mode"),
      NGX_HTTP_LOC_CONF|NGX_CONF_NOARGS|NGX_CONF_TAKE1,
      ngx_http_demo_mode,
      0, 0, NULL },

    { ngx_string("demo_zone"),
      NGX_HTTP_MAIN_CONF|NGX_CONF_BLOCK|NGX_CONF_1MORE,
      ngx_http_demo_mode,
      0, 0, NULL },

      ngx_null_command
};

ngx_module_t  ngx_http_demo_filter_module = {
    NGX_MODULE_V1,
    &ngx_http_demo_module_ctx,             /* module context */
    ngx_http_demo_commands,                /* module directives */
    NGX_HTTP_MODULE,                       /* module type */
    NULL, NULL, NULL, NULL, NULL, NULL, NULL,
    NGX_MODULE_V1_PADDING
};

static char *
ngx_http_demo_mode(ngx_conf_t *cf, ngx_command_t *cmd, void *conf)
{
    if (dcf->mode != NGX_CONF_UNSET_UINT) {
        return "is duplicate";
    }
    return NGX_CONF_OK;
}
"""

STOCK = {"ngx_conf_set_flag_slot", "ngx_conf_set_size_slot"}


def test_masks_translate_as_ngx_conf_handler_reads_them() -> None:
    assert contexts_of("NGX_MAIN_CONF|NGX_DIRECT_CONF|NGX_CONF_TAKE1") == ("main", "1", False, [])
    assert contexts_of("NGX_ANY_CONF|NGX_CONF_TAKE1")[0] == "*"
    # FLAG and 1MORE win over TAKE bits, as in ngx_conf_handler().
    assert contexts_of("NGX_HTTP_LOC_CONF|NGX_CONF_TAKE1|NGX_CONF_1MORE")[1] == "1+"
    assert contexts_of("NGX_STREAM_SRV_CONF|NGX_CONF_TAKE123")[:2] == ("ssrv", "123")
    assert contexts_of("NGX_HTTP_SRV_CONF|NGX_BOGUS_CONF|NGX_CONF_FLAG")[3] == ["NGX_BOGUS_CONF"]


def test_command_table_rows() -> None:
    parsed = parse_source(SOURCE)
    assert parsed.modules == {"ngx_http_demo_commands": "ngx_http_demo_filter_module"}
    assert parsed.duplicate_checks == {"ngx_http_demo_mode"}
    rows = rows_of([("src/http/modules/demo.c", parsed)], "1.2.3", set(), STOCK)
    by_name = {name: row for (name, _m, _b), row in rows.items()}
    enable = by_name["demo_enable"]
    assert (enable.module, enable.contexts, enable.args) == (
        "http_demo_module",
        "http srv loc lif",
        "flag",
    )
    assert enable.repeat is False and enable.first == "1.2.3"
    # conditional entries count, comments inside the mask do not.
    assert (by_name["demo_buffer"].args, by_name["demo_buffer"].kind) == ("12", "size")
    # a custom handler's "is duplicate" may be for one value mix only: not trusted.
    assert by_name["demo_mode"].args == "01" and by_name["demo_mode"].repeat is True
    assert by_name["demo_zone"].block and by_name["demo_zone"].args == "1+"


def test_module_labels_follow_configure_names() -> None:
    assert module_label("ngx_http_gzip_filter_module", "src/http/modules/x.c") == "http_gzip_module"
    assert module_label("ngx_http_image_filter_module", "x.c") == "http_image_filter_module"
    assert module_label("ngx_epoll_module", "src/event/modules/ngx_epoll_module.c") == "events"
    assert module_label("ngx_errlog_module", "src/core/ngx_log.c") == "core"
    assert module_label("ngx_stream_core_module", "src/stream/x.c") == "stream"


def _regenerate_command() -> list[str] | None:
    """The arguments the committed table's header says regenerate it, if those sources are here."""
    from nginx_fleet_analyzer import directive_data

    doc = directive_data.__doc__ or ""
    marker = "python scripts/gen_directive_table.py "
    start = doc.index(marker) + len(marker)
    text = doc[start : doc.index("\n\n", start)].replace("\\\n", " ")
    args = text.split()
    paths = [args[0]] + [a.split("=", 1)[1] for a in args if "=" in a]
    return args if all(Path(p).is_dir() for p in paths) else None


@pytest.mark.skipif(_regenerate_command() is None, reason="the module sources are not here")
def test_the_committed_table_is_what_the_generator_writes(tmp_path: Path) -> None:
    from nginx_fleet_analyzer import directive_data

    out = tmp_path / "directive_data.py"
    args = _regenerate_command() or []
    assert main([*args, "--out", str(out)]) == 0
    assert out.read_text() == Path(directive_data.__file__).read_text()
