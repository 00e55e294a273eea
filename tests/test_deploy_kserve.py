"""deploy/kserve/: the ServingRuntime and InferenceService manifests, checked as far as
this machine allows (no cluster, no KServe CRDs here): they parse, are the kinds and
API versions KServe serves, agree with each other, and run a daemon that accepts every
flag they give."""

from __future__ import annotations

import subprocess

import yaml

from conftest import DEADLINE_S, ROOT, built_tool

DEPLOY = ROOT / "deploy" / "kserve"


def load(name):
    docs = list(yaml.safe_load_all((DEPLOY / name).read_text()))
    assert len(docs) == 1
    return docs[0]


def test_manifests_agree_and_the_daemon_takes_their_flags():
    runtime = load("serving-runtime.yaml")
    service = load("inference-service.yaml")
    assert (runtime["apiVersion"], runtime["kind"]) == ("serving.kserve.io/v1alpha1",
                                                        "ServingRuntime")
    assert (service["apiVersion"], service["kind"]) == ("serving.kserve.io/v1beta1",
                                                        "InferenceService")
    model = service["spec"]["predictor"]["model"]
    assert model["runtime"] == runtime["metadata"]["name"]
    assert model["modelFormat"]["name"] in {f["name"] for f in
                                            runtime["spec"]["supportedModelFormats"]}
    assert model["protocolVersion"] in runtime["spec"]["protocolVersions"]
    (container,) = runtime["spec"]["containers"]
    assert container["name"] == "kserve-container"  # the name KServe looks for
    args = container["args"]
    flags = dict(zip(args[::2], args[1::2]))
    assert flags["--models"] == "/mnt/models"  # where the storage initializer puts models
    http_port = int(flags["--kserve-http"].rsplit(":", 1)[1])
    assert container["ports"][0]["containerPort"] == http_port
    assert container["readinessProbe"]["httpGet"] == {"path": "/v2/health/ready",
                                                      "port": http_port}
    metrics_port = flags["--metrics"].rsplit(":", 1)[1]
    assert runtime["metadata"]["annotations"]["prometheus.kserve.io/port"] == metrics_port
    # Every flag, as given, is one the daemon takes (it parses them all before --version).
    r = subprocess.run([built_tool("et-serverd", "server"), *args, "--version"],
                       capture_output=True, text=True, timeout=DEADLINE_S)
    assert r.returncode == 0 and r.stdout.startswith("et-serverd "), r
