"""The suite's file order: seconds per file read from a junit report, longest file first."""

import file_seconds

_REPORT = """<?xml version="1.0" encoding="utf-8"?>
<testsuites><testsuite name="pytest">
<testcase classname="tests.a.test_x" name="test_one" time="1.5"/>
<testcase classname="tests.a.test_x" name="test_two" time="2.0"/>
<testcase classname="tests.a.test_x.TestGroup" name="test_three" time="0.5"/>
<testcase classname="tests.test_y" name="test_four" time="10.25"/>
<testcase classname="tests.gone" name="test_five" time="99"/>
</testsuite></testsuites>
"""


def test_seconds_are_summed_per_file_and_methods_count_for_their_file(tmp_path):
    (tmp_path / "tests/a").mkdir(parents=True)
    (tmp_path / "tests/a/test_x.py").write_text("")
    (tmp_path / "tests/test_y.py").write_text("")
    report = tmp_path / "run.xml"
    report.write_text(_REPORT)
    seconds = file_seconds.file_seconds(report, root=tmp_path)
    # 1.5 + 2.0 + 0.5 for test_x (the class method too); a file that no longer exists is left out
    assert seconds == {"tests/a/test_x.py": 4.0, "tests/test_y.py": 10.2}


def test_longest_file_first_and_unknown_files_keep_their_place():
    paths = ["s.py", "s.py", "long.py", "new.py", "mid.py", "long.py"]
    order = file_seconds.longest_first(paths, {"s.py": 1.0, "long.py": 30.0, "mid.py": 5.0})
    assert [paths[i] for i in order] == ["long.py", "long.py", "mid.py", "s.py", "s.py", "new.py"]
    assert order == [2, 5, 4, 0, 1, 3]  # a file's own tests keep their order


def test_the_recorded_figures_name_files_that_exist():
    seconds = file_seconds.load()
    assert seconds, "tests/file_seconds.json is missing or empty"
    missing = [name for name in seconds if not (file_seconds.HERE.parent / name).is_file()]
    assert not missing, f"regenerate tests/file_seconds.json: {missing[:3]} are gone"
