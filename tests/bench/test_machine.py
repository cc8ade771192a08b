"""bench machine: the CPU a comparison ran on, read from /proc/cpuinfo's text."""

from electra_tf.bench.machine import FLAGS, cpu, machine

ZEN5 = """processor\t: 0
vendor_id\t: AuthenticAMD
cpu family\t: 26
model\t\t: 2
model name\t: AMD EPYC
flags\t\t: fpu sse avx2 avx512f avx512dq avx_vnni avx512_bf16 avx512_vnni

processor\t: 1
model name\t: something else
"""

ARM = """processor\t: 0
BogoMIPS\t: 50.00
Features\t: fp asimd asimddp sve
CPU implementer\t: 0x41
"""


def test_the_first_processor_its_numbers_and_the_flags_that_pick_kernels():
    found = cpu(ZEN5)
    assert found == {
        "name": "AMD EPYC", "family": 26, "model": 2,
        "flags": ["avx2", "avx512f", "avx512_vnni", "avx512_bf16", "avx_vnni"],
    }  # fmt: skip
    assert found["flags"] == [flag for flag in FLAGS if flag in found["flags"]]  # FLAGS' order
    arm = cpu(ARM)
    assert arm["flags"] == ["asimddp"] and arm["family"] is None and arm["model"] is None


def test_this_machine_record_names_its_cores_and_libraries():
    record = machine()
    assert record["kind"] == "machine" and record["cores"] >= 1
    assert "tensorflow" in record["versions"] and set(record["cpu"]["flags"]) <= set(FLAGS)
