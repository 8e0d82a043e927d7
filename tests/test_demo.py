"""The demo runs end to end on the CPU and reports agreement with torch.linalg."""

from torch_batchchol import demo


def test_demo_runs_and_agrees(capsys):
    assert demo.main(["--device", "cpu", "--batch", "50", "--n", "9"]) == 0
    out = capsys.readouterr().out
    assert "cholesky(nested)" in out and "all ops agree with torch.linalg" in out
