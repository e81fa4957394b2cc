// The house in layers (docs/architecture.md), as rules dependency-cruiser checks on every `npm test`.
// Each floor names what it may import; anything else under shared/ or workers/ is an upward or sideways
// import and fails with the rule's name. The table is the one source: the rules below are made from it.

/** The domain areas (floor 3): each may import core/, db/ and the areas named here, nothing else. */
export const AREAS = {
  auth: [],
  limits: [],
  challenge: [],
  events: [],
  mail: [],
  model: [],
  rules: [],
  documents: [],
  apps: [],
  media: ["apps"],
  payments: ["rules"],
  shipping: ["rules"],
  storefront: [],
  marketing: ["events", "mail"],
  domains: ["events", "storefront"],
  orders: ["auth", "limits", "rules", "documents", "storefront", "marketing", "payments", "shipping"],
  notifications: ["events", "mail", "marketing", "media", "orders", "rules", "storefront"],
  restock: ["events", "mail", "notifications", "storefront"],
  ucp: ["apps", "orders", "rules", "storefront"],
};

const areas = Object.keys(AREAS);

/** Every folder of shared/, bottom to top, with the folders it may import (besides itself). */
export const FLOORS = [
  { floor: "core", holds: ["core"], may: [] },
  { floor: "db", holds: ["db"], may: ["core"] },
  { floor: "domain areas", holds: areas, may: ["core", "db"] },
  { floor: "procedures", holds: ["procedures"], may: ["core", "db", ...areas] },
  { floor: "pipeline", holds: ["pipeline"], may: ["core", "db", ...areas, "procedures"] },
  { floor: "assistant and jobs", holds: ["assistant", "jobs"], may: ["core", "db", ...areas, "procedures", "pipeline"] },
  { floor: "registry", holds: ["registry"], may: ["core", "db", ...areas, "procedures", "pipeline", "assistant"] },
  { floor: "door kit", holds: ["http"], may: ["core", "db", ...areas, "procedures", "pipeline", "assistant", "jobs", "registry"] },
];

const WORKERS = ["admin", "storefront", "worker"];
const PRODUCT_SOURCE = "^(shared|workers)/.+\\.tsx?$";
const TEST_SOURCE = "\\.test\\.tsx?$";
const anyOf = (names) => `^shared/(${names.join("|")})/`;

function folderRule(folder, may, floor) {
  const allowed = [folder, ...may];
  return {
    name: `${folder}-imports-only-below`,
    comment: `shared/${folder}/ is on the floor "${floor}" and may import only shared/{${allowed.join(",")}}/ (docs/architecture.md). Move the helper down to the floor both can import, or pass it in from above.`,
    severity: "error",
    from: { path: `^shared/${folder}/`, pathNot: TEST_SOURCE },
    to: { path: "^(shared|workers)/", pathNot: anyOf(allowed) },
  };
}

const floorRules = FLOORS.flatMap(({ floor, holds, may }) =>
  holds.map((folder) => folderRule(folder, floor === "domain areas" ? [...may, ...AREAS[folder]] : may, floor === "domain areas" ? `domain area ${folder}` : floor)),
);

const doorRules = WORKERS.map((name) => ({
  name: `${name}-worker-imports-no-other-worker`,
  comment: `workers/${name}/ is a door: it imports shared/ and its own files, never another Worker's (docs/architecture.md). Move what both need into shared/.`,
  severity: "error",
  from: { path: `^workers/${name}/`, pathNot: TEST_SOURCE },
  to: { path: "^workers/", pathNot: `^workers/${name}/` },
}));

/** @type {import('dependency-cruiser').IConfiguration} */
export default {
  forbidden: [
    {
      name: "no-cycle",
      comment: "Files import one another in a circle. Move the shared part down into a file both can import.",
      severity: "error",
      from: { path: PRODUCT_SOURCE },
      to: { circular: true },
    },
    {
      name: "product-imports-no-test-code",
      comment: "Product code under shared/ or workers/ imports a test helper or fake from test/. Fakes stay in test/; the local providers the dev stack runs are product code, named local.",
      severity: "error",
      from: { path: PRODUCT_SOURCE, pathNot: TEST_SOURCE },
      to: { path: "^test/" },
    },
    {
      name: "shared-folder-on-no-floor",
      comment: "A folder of shared/ that docs/architecture.md and .dependency-cruiser.mjs do not place on a floor. Add it to the table (and the document) before using it.",
      severity: "error",
      from: { path: "^shared/", pathNot: anyOf(FLOORS.flatMap((f) => f.holds)) },
      to: {},
    },
    ...floorRules,
    ...doorRules,
  ],
  options: {
    doNotFollow: { path: "node_modules" },
    exclude: { path: "^(node_modules|\\.data|\\.wrangler)/" },
    tsPreCompilationDeps: true,
    combinedDependencies: false,
    tsConfig: { fileName: "tsconfig.json" },
    enhancedResolveOptions: {
      extensions: [".ts", ".tsx", ".mjs", ".js", ".json"],
      conditionNames: ["import", "workerd", "worker", "default"],
      mainFields: ["module", "main"],
    },
    reporterOptions: { text: { highlightFocused: true } },
  },
};
