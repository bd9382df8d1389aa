// Validates the Kubernetes manifests under deploy/kubernetes without a cluster:
//  1. every document against its schema: core and RBAC kinds with kubernetes-models (the
//     Kubernetes OpenAPI schemas: types, required fields, enums, formats), Gateway and HTTPRoute
//     with @kubernetes-models/gateway-api, InferencePool and the endpoint picker's config with
//     the strict schemas in schemas/ (unknown fields are errors there);
//  2. the references between them and radixserve's own settings: selectors, named ports,
//     RBAC subjects, the InferencePool's picker Service and port, the route's backend, every
//     RADIXSERVE_* variable against config/radixserve.yaml, and that the event port, block size
//     and model name agree between the replicas and the endpoint picker;
//  3. every picker plugin's parameters against the strict schema of the pinned picker version
//     (schemas/epp-plugin-parameters.json, field names from llm-d-router v0.10.0's Go source),
//     and that the picker's render URL (token-producer vllm.url) reaches the replicas.
// Usage: node validate.mjs           check the manifests
//        node validate.mjs --self-test  also check that broken copies are rejected
import { readFileSync, readdirSync, statSync } from "node:fs";
import { join, relative, dirname } from "node:path";
import { fileURLToPath } from "node:url";
import yaml from "js-yaml";
import Ajv from "ajv";
import * as core from "kubernetes-models/v1";
import * as apps from "kubernetes-models/apps/v1";
import * as rbac from "kubernetes-models/rbac.authorization.k8s.io/v1";
import * as gateway from "@kubernetes-models/gateway-api/gateway.networking.k8s.io/v1";

const here = dirname(fileURLToPath(import.meta.url));
const root = join(here, "..", "..");
const ajv = new Ajv({ allErrors: true, strict: false });
const poolSchema = ajv.compile(JSON.parse(readFileSync(join(here, "schemas/inferencepool-v1.json"))));
const eppSchema = ajv.compile(JSON.parse(readFileSync(join(here, "schemas/endpoint-picker-config.json"))));
// each plugin type's parameters as the pinned picker (llm-d-router v0.10.0) decodes them, strictly
const pluginDefs = JSON.parse(readFileSync(join(here, "schemas/epp-plugin-parameters.json"))).definitions;
const pluginSchemas = Object.fromEntries(Object.keys(pluginDefs).filter((k) => k.includes("-"))
  .map((type) => [type, ajv.compile({ definitions: pluginDefs, $ref: `#/definitions/${type}` })]));

const MODELS = {
  "v1/Service": core.Service, "v1/ServiceAccount": core.ServiceAccount,
  "v1/ConfigMap": core.ConfigMap, "apps/v1/Deployment": apps.Deployment,
  "rbac.authorization.k8s.io/v1/Role": rbac.Role,
  "rbac.authorization.k8s.io/v1/RoleBinding": rbac.RoleBinding,
  "gateway.networking.k8s.io/v1/Gateway": gateway.Gateway,
  "gateway.networking.k8s.io/v1/HTTPRoute": gateway.HTTPRoute,
};

function yamlFiles(dir) {
  return readdirSync(dir).flatMap((f) => {
    const p = join(dir, f);
    return statSync(p).isDirectory() ? yamlFiles(p) : /\.ya?ml$/.test(f) ? [p] : [];
  });
}

export function load(dir) {
  return yamlFiles(dir).flatMap((file) => yaml.loadAll(readFileSync(file, "utf8"))
    .filter((d) => d != null).map((doc) => ({ file: relative(root, file), doc })));
}

const ajvErrors = (v) => v.errors.map((e) => `${e.instancePath || "/"} ${e.message}`).join("; ");

/** Returns the list of problems; empty when all is well. */
export function check(docs, settingsYaml) {
  const problems = [];
  const fail = (where, what) => problems.push(`${where}: ${what}`);
  const byKind = (kind) => docs.filter((d) => d.doc.kind === kind);
  const named = (kind, name) => byKind(kind).find((d) => d.doc.metadata?.name === name);

  // 1. schemas
  for (const { file, doc } of docs) {
    const where = `${file} ${doc.kind}/${doc.metadata?.name}`;
    const key = `${doc.apiVersion}/${doc.kind}`;
    if (key === "inference.networking.k8s.io/v1/InferencePool") {
      if (!poolSchema(doc)) fail(where, ajvErrors(poolSchema));
    } else if (MODELS[key]) {
      try {
        new MODELS[key](doc).validate();
      } catch (e) {
        fail(where, e.message);
      }
    } else {
      fail(where, `no schema for ${key}`);
    }
  }

  // 2. references
  const labelsMatch = (selector, labels) =>
    Object.entries(selector ?? {}).every(([k, v]) => labels?.[k] === v);
  const podsFor = (selector) => byKind("Deployment").filter((d) =>
    labelsMatch(selector, d.doc.spec.template.metadata.labels));
  const ports = (dep) => dep.doc.spec.template.spec.containers.flatMap((c) => c.ports ?? []);

  for (const { file, doc } of byKind("Deployment")) {
    const where = `${file} Deployment/${doc.metadata.name}`;
    const pod = doc.spec.template;
    if (!labelsMatch(doc.spec.selector.matchLabels, pod.metadata.labels)) {
      fail(where, "selector does not match the pod template's labels");
    }
    const portNames = new Set(pod.spec.containers.flatMap((c) => (c.ports ?? []).map((p) => p.name)));
    for (const c of pod.spec.containers) {
      for (const probe of [c.startupProbe, c.readinessProbe, c.livenessProbe]) {
        const port = probe?.httpGet?.port;
        if (typeof port === "string" && !portNames.has(port)) fail(where, `probe port ${port} is not a container port`);
      }
      const defined = new Set();
      for (const e of c.env ?? []) {
        for (const [, ref] of (e.value ?? "").matchAll(/\$\(([A-Z0-9_]+)\)/g)) {
          if (!defined.has(ref)) fail(where, `${e.name} uses $(${ref}) before it is defined`);
        }
        defined.add(e.name);
      }
      for (const m of c.volumeMounts ?? []) {
        if (!(pod.spec.volumes ?? []).some((v) => v.name === m.name)) fail(where, `mount of unknown volume ${m.name}`);
      }
      for (const v of pod.spec.volumes ?? []) {
        if (v.configMap && !named("ConfigMap", v.configMap.name)) fail(where, `volume of unknown ConfigMap ${v.configMap.name}`);
      }
    }
    if (pod.spec.serviceAccountName && !named("ServiceAccount", pod.spec.serviceAccountName)) {
      fail(where, `unknown ServiceAccount ${pod.spec.serviceAccountName}`);
    }
    const scrape = pod.metadata.annotations?.["prometheus.io/port"];
    if (scrape && !ports({ doc }).some((p) => String(p.containerPort) === scrape)) {
      fail(where, `prometheus.io/port ${scrape} is not a container port`);
    }
  }

  for (const { file, doc } of byKind("Service")) {
    const where = `${file} Service/${doc.metadata.name}`;
    const backends = podsFor(doc.spec.selector);
    if (backends.length === 0) fail(where, "selects no Deployment's pods");
    for (const p of doc.spec.ports) {
      const ok = backends.some((d) => ports(d).some((cp) =>
        typeof p.targetPort === "string" ? cp.name === p.targetPort : cp.containerPort === (p.targetPort ?? p.port)));
      if (!ok) fail(where, `targetPort ${p.targetPort} is not a port of the selected pods`);
    }
  }

  for (const { file, doc } of byKind("RoleBinding")) {
    const where = `${file} RoleBinding/${doc.metadata.name}`;
    if (!named(doc.roleRef.kind, doc.roleRef.name)) fail(where, `unknown ${doc.roleRef.kind} ${doc.roleRef.name}`);
    for (const s of doc.subjects ?? []) {
      if (s.kind === "ServiceAccount" && !named("ServiceAccount", s.name)) fail(where, `unknown ServiceAccount ${s.name}`);
    }
  }

  for (const { file, doc } of byKind("InferencePool")) {
    const where = `${file} InferencePool/${doc.metadata.name}`;
    const pods = podsFor(doc.spec.selector?.matchLabels);
    if (pods.length === 0) fail(where, "selects no Deployment's pods");
    for (const t of doc.spec.targetPorts ?? []) {
      if (!pods.some((d) => ports(d).some((p) => p.containerPort === t.number))) fail(where, `target port ${t.number} is not a container port of the pool's pods`);
    }
    const ref = doc.spec.endpointPickerRef;
    const svc = ref && named("Service", ref.name);
    if (!svc) fail(where, `endpoint picker Service ${ref?.name} is not defined`);
    else if (!svc.doc.spec.ports.some((p) => p.port === ref.port?.number)) fail(where, `endpoint picker Service has no port ${ref.port?.number}`);
  }

  for (const { file, doc } of byKind("HTTPRoute")) {
    const where = `${file} HTTPRoute/${doc.metadata.name}`;
    for (const p of doc.spec.parentRefs ?? []) {
      if (!named(p.kind ?? "Gateway", p.name)) fail(where, `unknown parent ${p.name}`);
    }
    for (const b of (doc.spec.rules ?? []).flatMap((r) => r.backendRefs ?? [])) {
      if (b.kind === "InferencePool" && !named("InferencePool", b.name)) fail(where, `unknown InferencePool ${b.name}`);
    }
  }

  // the endpoint picker's config, and what it must agree on with the replicas
  const settings = new Set(Object.keys(yaml.load(settingsYaml)));
  const replica = byKind("Deployment").flatMap((d) => d.doc.spec.template.spec.containers
    .filter((c) => (c.env ?? []).some((e) => e.name.startsWith("RADIXSERVE_"))).map((c) => ({ d, c })));
  if (replica.length !== 1) fail("deploy/kubernetes", `expected one radixserve container, found ${replica.length}`);
  const env = Object.fromEntries((replica[0]?.c.env ?? []).map((e) => [e.name, e.value]));
  for (const name of Object.keys(env).filter((n) => n.startsWith("RADIXSERVE_"))) {
    const key = name.slice("RADIXSERVE_".length).toLowerCase().replaceAll("_", "-");
    if (!settings.has(key)) fail(replica[0].d.file, `${name} is no radixserve setting (config/radixserve.yaml has no ${key})`);
  }
  const model = env.RADIXSERVE_SERVED_MODEL_NAME;
  const eventPort = Number(/:(\d+)$/.exec(env.RADIXSERVE_KV_EVENTS_ENDPOINT ?? "")?.[1]);
  if (env.RADIXSERVE_KV_EVENTS !== "true") fail(replica[0]?.d.file, "RADIXSERVE_KV_EVENTS is not true");
  if (!ports(replica[0]?.d ?? { doc: { spec: { template: { spec: { containers: [] } } } } }).some((p) => p.containerPort === eventPort)) {
    fail(replica[0]?.d.file, `the KV event port ${eventPort} is not a container port`);
  }
  const topic = /^kv@\$\(POD_IP\):(\d+)@(.+)$/.exec(env.RADIXSERVE_KV_EVENTS_TOPIC ?? "");
  if (!topic) fail(replica[0]?.d.file, "RADIXSERVE_KV_EVENTS_TOPIC is not kv@$(POD_IP):<port>@<model>");
  else if (topic[2] !== model) fail(replica[0].d.file, `topic model ${topic[2]} != served model ${model}`);

  for (const { file, doc } of byKind("ConfigMap")) {
    const text = doc.data?.["epp-config.yaml"];
    if (!text) continue;
    const where = `${file} ConfigMap/${doc.metadata.name} epp-config.yaml`;
    const epp = yaml.load(text);
    if (!eppSchema(epp)) {
      fail(where, ajvErrors(eppSchema));
      continue;
    }
    for (const p of epp.plugins) {
      const valid = pluginSchemas[p.type];
      if (!valid) fail(where, `plugin type ${p.type}: no parameter schema for it (schemas/epp-plugin-parameters.json)`);
      else if (p.parameters !== undefined && !valid(p.parameters)) fail(where, `${p.type} parameters: ${ajvErrors(valid)}`);
    }
    const names = new Set(epp.plugins.map((p) => p.name ?? p.type));
    const refs = [...epp.schedulingProfiles.flatMap((s) => s.plugins.map((p) => p.pluginRef)),
      ...(epp.dataLayer?.sources ?? []).flatMap((s) => [s.pluginRef, ...(s.extractors ?? []).map((x) => x.pluginRef)])];
    for (const r of refs) if (!names.has(r)) fail(where, `pluginRef ${r} names no plugin`);
    const params = (type) => epp.plugins.find((p) => p.type === type)?.parameters ?? {};
    const producer = params("precise-prefix-cache-producer");
    if (params("prefix-cache-scorer").prefixMatchInfoProducerName !== "precise-prefix-cache-producer") {
      fail(where, "prefix-cache-scorer does not read the precise producer");
    }
    if (producer.kvEventsConfig?.podDiscoveryConfig?.socketPort !== eventPort) fail(where, `socketPort ${producer.kvEventsConfig?.podDiscoveryConfig?.socketPort} != replicas' event port ${eventPort}`);
    if (producer.kvEventsConfig?.engineType !== "vllm") fail(where, "engineType is not vllm");
    if (producer.tokenProcessorConfig?.blockSize !== undefined) fail(where, "tokenProcessorConfig.blockSize is deprecated in the picker; use blockSizeTokens");
    if (String(producer.tokenProcessorConfig?.blockSizeTokens) !== env.RADIXSERVE_BLOCK_SIZE) fail(where, `blockSizeTokens ${producer.tokenProcessorConfig?.blockSizeTokens} != RADIXSERVE_BLOCK_SIZE ${env.RADIXSERVE_BLOCK_SIZE}`);
    const replayPort = Number(/:(\d+)$/.exec(env.RADIXSERVE_KV_EVENTS_REPLAY_ENDPOINT ?? "")?.[1]);
    const replaySocket = producer.kvEventsConfig?.podDiscoveryConfig?.replaySocketPort;
    if (replaySocket !== undefined && replaySocket !== replayPort) fail(where, `replaySocketPort ${replaySocket} != replicas' replay port ${replayPort}`);
    const tokens = params("token-producer");
    if (tokens.modelName !== model) fail(where, `token-producer model ${tokens.modelName} != served model ${model}`);
    if (tokens.udsTokenizerConfig) fail(where, "token-producer uses the deprecated UDS tokenizer sidecar; radixserve serves vLLM's render endpoints (vllm.url)");
    // the render URL must reach the replicas: a Service selecting their pods, on a port they serve
    const render = /^http:\/\/([a-z0-9-]+)(?:\.[a-z0-9.-]+)?:(\d+)$/.exec(tokens.vllm?.url ?? "");
    const renderService = render && named("Service", render[1]);
    if (!renderService) fail(where, `token-producer vllm.url ${tokens.vllm?.url} names no Service here`);
    else if (!renderService.doc.spec.ports.some((p) => p.port === Number(render[2]))
      || !labelsMatch(renderService.doc.spec.selector, replica[0]?.d.doc.spec.template.metadata.labels)) {
      fail(where, `token-producer vllm.url ${tokens.vllm.url} does not reach the radixserve pods`);
    }
    const selector = producer.kvEventsConfig?.podDiscoveryConfig?.podLabelSelector ?? "llm-d.ai/inference-serving=true";
    const wanted = Object.fromEntries(selector.split(",").map((kv) => kv.split("=")));
    if (!labelsMatch(wanted, replica[0]?.d.doc.spec.template.metadata.labels)) fail(where, `podLabelSelector ${selector} misses the radixserve pods`);
  }
  return problems;
}

/** Broken copies of the manifests, each of which must be rejected. */
function selfTest(docs, settingsYaml) {
  const mutate = (kind, name, f) => {
    const copy = structuredClone(docs);
    f(copy.find((d) => d.doc.kind === kind && d.doc.metadata.name === name).doc);
    return copy;
  };
  const editEpp = (f) => (cm) => {
    const epp = yaml.load(cm.data["epp-config.yaml"]);
    f(epp);
    cm.data["epp-config.yaml"] = yaml.dump(epp);
  };
  const cases = {
    "a container port as text": mutate("Deployment", "radixserve", (d) => { d.spec.template.spec.containers[0].ports[0].containerPort = "8000"; }),
    "an unknown InferencePool field": mutate("InferencePool", "radixserve", (d) => { d.spec.targetPort = 8000; }),
    "a pool port no pod has": mutate("InferencePool", "radixserve", (d) => { d.spec.targetPorts[0].number = 8080; }),
    "an unknown setting": mutate("Deployment", "radixserve", (d) => { d.spec.template.spec.containers[0].env.push({ name: "RADIXSERVE_KV_EVENT", value: "true" }); }),
    "a socket port the pods do not publish on": mutate("ConfigMap", "radixserve-epp-config", editEpp((e) => { e.plugins.find((p) => p.type === "precise-prefix-cache-producer").parameters.kvEventsConfig.podDiscoveryConfig.socketPort = 5556; })),
    "a dangling pluginRef": mutate("ConfigMap", "radixserve-epp-config", editEpp((e) => { e.schedulingProfiles[0].plugins.push({ pluginRef: "nope" }); })),
    "a block size mismatch": mutate("ConfigMap", "radixserve-epp-config", editEpp((e) => { e.plugins.find((p) => p.type === "precise-prefix-cache-producer").parameters.tokenProcessorConfig.blockSizeTokens = 64; })),
    "a renamed plugin field (strictly decoded by the picker)": mutate("ConfigMap", "radixserve-epp-config", editEpp((e) => { const t = e.plugins.find((p) => p.type === "precise-prefix-cache-producer").parameters.tokenProcessorConfig; t.blockSizeToken = t.blockSizeTokens; delete t.blockSizeTokens; })),
    "parameters on a plugin that takes none": mutate("ConfigMap", "radixserve-epp-config", editEpp((e) => { e.plugins.find((p) => p.type === "queue-scorer").parameters = { weight: 2 }; })),
    "the deprecated blockSize": mutate("ConfigMap", "radixserve-epp-config", editEpp((e) => { const t = e.plugins.find((p) => p.type === "precise-prefix-cache-producer").parameters.tokenProcessorConfig; t.blockSize = 16; })),
    "a render URL no Service answers": mutate("ConfigMap", "radixserve-epp-config", editEpp((e) => { e.plugins.find((p) => p.type === "token-producer").parameters.vllm.url = "http://radixserve:8080"; })),
    "the deprecated tokenizer sidecar": mutate("ConfigMap", "radixserve-epp-config", editEpp((e) => { e.plugins.find((p) => p.type === "token-producer").parameters.udsTokenizerConfig = { socketFile: "/tmp/t.socket" }; })),
    "a replay port the pods do not serve": mutate("ConfigMap", "radixserve-epp-config", editEpp((e) => { e.plugins.find((p) => p.type === "precise-prefix-cache-producer").parameters.kvEventsConfig.podDiscoveryConfig.replaySocketPort = 5559; })),
    "a route to no pool": mutate("HTTPRoute", "radixserve", (d) => { d.spec.rules[0].backendRefs[0].name = "other"; }),
  };
  let missed = 0;
  for (const [what, broken] of Object.entries(cases)) {
    const found = check(broken, settingsYaml);
    console.log(`self-test: ${what}: ${found.length ? "rejected (" + found[0] + ")" : "NOT REJECTED"}`);
    if (!found.length) missed++;
  }
  return { passed: Object.keys(cases).length - missed, failed: missed };
}

const docs = load(join(root, "deploy", "kubernetes"));
const settingsYaml = readFileSync(join(root, "config", "radixserve.yaml"), "utf8");
const problems = check(docs, settingsYaml);
for (const p of problems) console.log(`INVALID ${p}`);
let passed = problems.length ? 0 : 1;
let failed = problems.length ? 1 : 0;
if (process.argv.includes("--self-test")) {
  const r = selfTest(docs, settingsYaml);
  passed += r.passed;
  failed += r.failed;
}
console.log(`deploy/kubernetes: ${docs.length} documents in ${new Set(docs.map((d) => d.file)).size} files`);
console.log(`manifests: ${passed} passed, ${failed} failed`);
process.exit(failed ? 1 : 0);
