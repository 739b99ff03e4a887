"""sources/psql.py's pieces on what psql and PostgreSQL print: \\watch headers and footers in psql's
languages (strings from psql 15's message catalogues), `%c` times in glibc's locales (printed by
`LC_ALL=xx_XX.UTF-8 TZ=America/New_York date -d '2026-03-05 09:04:07Z' +%c` on the project's machine),
timestamptz in each DateStyle (printed by PostgreSQL 15 with SET DateStyle / TimeZone), and the table
styles' cells."""

from __future__ import annotations

import datetime as dt

import pytest

from dbtier.history.sources import psql

T = dt.datetime(2026, 3, 5, 4, 4, 7)          # 09:04:07 UTC in New York (EST)
PM = dt.datetime(2026, 3, 5, 14, 4, 7)        # 19:04:07 UTC


@pytest.mark.parametrize("text, local, zone, offset", [
    ("Thu Mar  5 04:04:07 2026", T, None, None),                         # C
    ("Thu 05 Mar 2026 04:04:07 AM EST", T, "EST", None),                  # en_US
    ("Thu 05 Mar 2026 02:04:07 PM EST", PM, "EST", None),
    ("Thu 05 Mar 2026 12:04:07 AM EST", T.replace(hour=0), "EST", None),
    ("Thu 05 Mar 2026 04:04:07 EST", T, "EST", None),                     # en_GB
    ("jeu. 05 mars 2026 04:04:07", T, None, None),                        # fr_FR
    ("Do 05 Mär 2026 04:04:07 EST", T, "EST", None),                      # de_DE
    ("jue 05 mar 2026 04:04:07", T, None, None),                          # es_ES
    ("gio 5 mar 2026, 04:04:07", T, None, None),                          # it_IT
    ("mar 3 mar 2026, 04:04:07", T.replace(day=3), None, None),           # it_IT, a Tuesday: mar(tedì) mar(zo)
    ("qui 05 mar 2026 04:04:07", T, None, None),                          # pt_BR
    ("do 05 mrt 2026 04:04:07 EST", T, "EST", None),                      # nl_NL
    ("tor  5 mar 2026 04:04:07", T, None, None),                          # sv_SE
    ("czw, 5 mar 2026, 04:04:07", T, None, None),                         # pl_PL
    ("Čt 5. března 2026, 04:04:07", T, None, None),                       # cs_CZ
    ("Čt 5. července 2026, 04:04:07", T.replace(month=7), None, None),
    ("Čt 5. června 2026, 04:04:07", T.replace(month=6), None, None),
    ("to  5. maaliskuuta 2026 04.04.07", T, None, None),                  # fi_FI
    ("2026. márc. 5., csütörtök, 04:04:07 EST", T, "EST", None),          # hu_HU
    ("Prş 05 Mar 2026 04:04:07", T, None, None),                          # tr_TR
    ("Чт 05 мар 2026 04:04:07", T, None, None),                           # ru_RU
    ("чт, 05-бер-2026 14:04:07 -0500", PM, None, -5 * 3600),             # uk_UA
    ("Πεμ 05 Μαρ 2026 02:04:07 μμ EST", PM, "EST", None),                # el_GR
    ("2026年03月05日 04時04分07秒", T, None, None),                        # ja_JP
    ("2026년 03월 05일 (목) 오후 02시 04분 07초", PM, None, None),           # ko_KR
    ("2026年03月05日 星期四 14时04分07秒", PM, None, None),                  # zh_CN
    ("tor 05 mar 2026 04:04:07 UTC", T, None, 0),
])
def test_watch_times_in_glibc_locales(text, local, zone, offset):
    s = psql.parse_time(text)
    assert (s.local, s.zone, s.offset_s) == (local, zone, offset)


NOW = dt.datetime(2026, 11, 28, 16, 25, 52, 499595)


@pytest.mark.parametrize("text, order, offset, zone", [
    ("2026-11-28 16:25:52.499595+01", None, 3600, None),                  # ISO, Europe/Paris
    ("2026-11-28 16:25:52.499595+05:30", None, 19800, None),
    ("2026-11-28 16:25:52.499595-03", None, -10800, None),
    ("2026-11-28 16:25:52.499595", None, None, None),                     # localtimestamp
    ("11/28/2026 16:25:52.499595 CET", None, None, "CET"),                # SQL, MDY (28 > 12 says which)
    ("28/11/2026 16:25:52.499595 CET", None, None, "CET"),                # SQL, DMY
    ("28/11/2026 16:25:52.499595 -03", None, -10800, None),
    ("Sat Nov 28 16:25:52.499595 2026 CET", None, None, "CET"),           # Postgres, MDY
    ("Sat 28 Nov 16:25:52.499595 2026 +03", None, 10800, None),           # Postgres, DMY
    ("28.11.2026 16:25:52.499595 UTC", None, 0, None),                    # German
])
def test_timestamptz_in_each_datestyle(text, order, offset, zone):
    s = psql.parse_time(text, order)
    assert (s.local, s.offset_s, s.zone) == (NOW, offset, zone)


def test_slash_dates_take_their_order_from_an_unambiguous_value():
    assert psql.slash_order(["05/11/2026 10:00:00 UTC", "28/11/2026 10:00:00 UTC"]) == "DMY"
    assert psql.slash_order(["11/05/2026 10:00:00 UTC", "11/28/2026 10:00:00 UTC"]) == "MDY"
    assert psql.slash_order(["05/11/2026 10:00:00 UTC"]) is None
    assert psql.parse_time("05/11/2026 10:00:00 UTC", "DMY").local.month == 11
    assert psql.parse_time("05/11/2026 10:00:00 UTC", "MDY").local.month == 5
    with pytest.raises(ValueError, match="reads as day/month and as month/day"):
        psql.parse_time("05/11/2026 10:00:00 UTC")


@pytest.mark.parametrize("text, why", [
    ("", "not a time"), ("to. 05. mars 2026 kl. 04.04 -0500", "no seconds"),      # nb_NO prints none
    ("2026 წლის 05 მარტი, 04:04:07", "no month name"), ("Thu Mar 5 04:04:07", "no year"),
    ("Thu Foo 5 04:04:07 2026", "no month name"), ("2026-02-30 10:00:00", "not a date"),
    ("Thu Mar 40 04:04:07 2026", "not a date"), ("Thu Mar 04:04:07 2026", "no day"),
])
def test_what_is_not_a_time(text, why):
    with pytest.raises(ValueError, match=why):
        psql.parse_time(text)


@pytest.mark.parametrize("line, text, every", [
    ("Sat Nov 28 15:27:23 2026 (every 10s)", "Sat Nov 28 15:27:23 2026", 10),
    ("      sam. 28 nov. 2026 16:27:23 (chaque 10s)", "sam. 28 nov. 2026 16:27:23", 10),
    ("Sa 28 Nov 2026 16:27:23 CET (alle 0,5s)", "Sa 28 Nov 2026 16:27:23 CET", 0.5),
    ("2026年11月28日 15時27分23秒 (60 秒毎)", "2026年11月28日 15時27分23秒", 60),
    ("2026년 11월 28일 (토) 오후 03시 27분 23초 (10초 간격)", "2026년 11월 28일 (토) 오후 03시 27분 23초", 10),
    ("Сб 28 ноя 2026 15:27:23 (обновление: 1e+03 с)", "Сб 28 ноя 2026 15:27:23", 1000),
    ("io\tSat Nov 28 15:27:23 2026 (every 60s)", "Sat Nov 28 15:27:23 2026", 60),   # \pset title io
])
def test_watch_headers_in_psqls_languages(line, text, every):
    assert psql.watch_title(line) == (text, every)


@pytest.mark.parametrize("line", ["(5 rows)", "(1 row)", "(5 lignes)", "(5 Zeilen)", "(5 行)", "(5개 행)",
                                  "(5 строк)", "(5 行记录)"])
def test_footers_in_psqls_languages(line):
    assert psql.footer(line) == 5 if "1 row" not in line else psql.footer(line) == 1


@pytest.mark.parametrize("line", ["client backend | relation | normal", "(every 10s)", "(rows)", "5 rows"])
def test_what_is_not_a_header_or_footer(line):
    assert psql.footer(line) is None and psql.watch_title(line) is None


def test_border_zero_cells_are_cut_by_display_width(tmp_path):
    """psql pads by display width: a wide character takes two columns of the rule's span."""
    f = tmp_path / "b0.txt"
    f.write_text(" datname   blks_read\n---------- ---------\n東京db     123456789\nplain              7\n(2 rows)\n")
    got = psql.parse(str(f), lambda names: "blks_read" in names)
    assert got is not None and got.form == "aligned"
    assert [r for _, r in got.results[0].rows] == [["東京db", "123456789"], ["plain", "7"]]


def test_chatter_before_the_first_result_is_passed_over(tmp_path):
    f = tmp_path / "chat.txt"
    f.write_text("Expanded display is off.\nTiming is on.\n datname | blks_read \n----------+-----------\n"
                 " a        |         1\n(1 row)\n\nTime: 0.512 ms\n")
    got = psql.parse(str(f), lambda names: "blks_read" in names)
    assert got is not None and [r for _, r in got.results[0].rows] == [["a", "1"]]


def test_names_for_sniffing():
    assert {"datname", "blks_read"} <= psql.names_in([" datname | blks_read ", "----+----"])
    assert {"backend_type", "reads"} <= psql.names_in(["backend_type|client backend", "reads|1000"])
    assert {"datname", "blks_read"} <= psql.names_in(["  datname   blks_read", "---------- ---------"])
