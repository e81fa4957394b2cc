/**
 * The demo catalogue, stock, customers, discounts and pages that `seedDemo` (seed.ts) writes, per store
 * slug. Plain constants so the README, tests and humans can read them. Money is integer paise (INR minor
 * units): ₹1,299 is 129900. Every row has a natural key (product handle, variant SKU, location name,
 * customer email, discount code, page handle), which is what keeps the seed idempotent.
 *
 * GST classes follow the rates in force since 22 September 2025 (docs/gst.md "Rates"; migration 0037):
 * apparel, clothing accessories and made-up textiles (chapters 61-63: kurtas, shirts, jackets, shawls,
 * dupattas, bedsheets, towels, cushion covers, runners) and cotton quilts (9404) are gst_apparel, footwear
 * (chapter 64) gst_footwear: 5 % while a unit's value after discount is at most ₹2,500 before GST (₹2,625.00
 * inclusive), 18 % above, resolved per line at checkout. A saree is woven silk fabric (5007), not apparel:
 * gst_5 at any price, as are the dhurrie (chapter 57), terracotta, art and steel utensils. Brass, copper and
 * the jute bag are gst_18.
 */

import type { StoreSeed } from "./seed-types";

export type * from "./seed-types";

const WH = "warehouse";
const BQ = "boutique";

const DEMO: StoreSeed = {
  theme: {
    brandColour: "#7a1f3d",
    accentColour: "#0b5d3b",
    announcementEnabled: true,
    announcementText: "Free shipping on orders over ₹999",
    announcementLink: "/products",
    bannerHeading: "Handwoven for the festive season",
    bannerText: "Handwoven silk, block prints and brass, straight from India's craft clusters.",
    bannerLinkLabel: "Shop the products",
    bannerLink: "/products",
  },
  locations: [
    {
      key: WH, name: "Mumbai Warehouse", sellsOnline: true, city: "Mumbai", state: "IN-MH",
      tax: { gstin: "27ABCDE1234F1Z0", legalName: "Demo Retail Private Limited", addressLine1: "Unit 4, Sagar Industrial Estate", addressLine2: "LBS Marg, Kurla West", postalCode: "400070" },
    },
    {
      // A second registration in the same state (CGST rule 11 allows one per place of business): entity number 2.
      key: BQ, name: "Bandra Boutique", sellsOnline: false, city: "Mumbai", state: "IN-MH",
      tax: { gstin: "27ABCDE1234F2ZZ", legalName: "Demo Retail Private Limited", addressLine1: "Shop 3, Hill Road", addressLine2: "Bandra West", postalCode: "400050" },
    },
  ],
  products: [
    {
      handle: "cotton-kurta", title: "Cotton Kurta", status: "active", vendor: "Jaipur Looms", hsnCode: "6211",
      description: "Straight-cut kurta in soft mul cotton with a mandarin collar. Hand wash cold.",
      variants: [
        { title: "S", sku: "KURTA-COT-S", priceMinor: 129900, taxClass: "gst_apparel", stock: { [WH]: 14, [BQ]: 3 } },
        { title: "M", sku: "KURTA-COT-M", priceMinor: 129900, taxClass: "gst_apparel", stock: { [WH]: 0, [BQ]: 4 } },
        { title: "L", sku: "KURTA-COT-L", priceMinor: 129900, taxClass: "gst_apparel", stock: { [WH]: 9, [BQ]: 2 } },
      ],
    },
    {
      handle: "banarasi-silk-saree", title: "Banarasi Silk Saree", status: "active", vendor: "Varanasi Weavers Co-op", hsnCode: "50072010",
      description: "Handwoven katan silk with zari buta and a broad brocade pallu. Comes with an unstitched blouse piece.",
      variants: [
        { title: "Maroon", sku: "SAREE-BAN-MAROON", priceMinor: 1250000, compareAtMinor: 1450000, taxClass: "gst_5", preorder: true, stock: { [WH]: 0, [BQ]: 0 } },
        { title: "Emerald", sku: "SAREE-BAN-EMERALD", priceMinor: 1250000, compareAtMinor: 1450000, taxClass: "gst_5", stock: { [WH]: 2, [BQ]: 1 } },
      ],
    },
    {
      handle: "block-print-bedsheet", title: "Block-print Bedsheet", status: "active", vendor: "Sanganer Prints", hsnCode: "630221",
      description: "Hand block-printed cotton percale with two pillow covers. Colours soften with every wash.",
      variants: [
        { title: "Single", sku: "BED-BLK-SINGLE", priceMinor: 145000, taxClass: "gst_apparel", stock: { [WH]: 20, [BQ]: 2 } },
        { title: "Double", sku: "BED-BLK-DOUBLE", priceMinor: 215000, taxClass: "gst_apparel", stock: { [WH]: 0, [BQ]: 3 } },
        { title: "King", sku: "BED-BLK-KING", priceMinor: 265000, taxClass: "gst_apparel", stock: { [WH]: 6, [BQ]: 1 } },
      ],
    },
    {
      handle: "chikankari-kurta", title: "Lucknowi Chikankari Kurta", status: "active", vendor: "Awadh Chikan House", hsnCode: "62114290",
      description: "Georgette kurta with hand chikan embroidery on the yoke and sleeves. Slip not included.",
      variants: [
        { title: "M", sku: "KURTA-CHK-M", priceMinor: 219900, taxClass: "gst_apparel", stock: { [WH]: 5, [BQ]: 2 } },
        { title: "L", sku: "KURTA-CHK-L", priceMinor: 219900, taxClass: "gst_apparel", stock: { [WH]: 4, [BQ]: 1 } },
        { title: "XL", sku: "KURTA-CHK-XL", priceMinor: 219900, taxClass: "gst_apparel", preorder: true, stock: { [WH]: 0, [BQ]: 0 } },
      ],
    },
    {
      handle: "handloom-linen-shirt", title: "Handloom Linen Shirt", status: "active", vendor: "Jaipur Looms", hsnCode: "6205",
      description: "Relaxed-fit shirt in handloom linen with coconut-shell buttons.",
      variants: [
        { title: "S", sku: "SHIRT-LIN-S", priceMinor: 189900, taxClass: "gst_apparel", stock: { [WH]: 7, [BQ]: 1 } },
        { title: "M", sku: "SHIRT-LIN-M", priceMinor: 189900, taxClass: "gst_apparel", stock: { [WH]: 11, [BQ]: 2 } },
        { title: "L", sku: "SHIRT-LIN-L", priceMinor: 189900, taxClass: "gst_apparel", stock: { [WH]: 0, [BQ]: 2 } },
      ],
    },
    {
      handle: "nehru-jacket", title: "Nehru Jacket", status: "active", vendor: "Khadi Collective", hsnCode: "620333",
      description: "Khadi-silk bandhgala waistcoat, fully lined, with a welt pocket.",
      variants: [
        { title: "M", sku: "JKT-NEHRU-M", priceMinor: 320000, taxClass: "gst_apparel", stock: { [WH]: 3, [BQ]: 1 } },
        { title: "L", sku: "JKT-NEHRU-L", priceMinor: 320000, taxClass: "gst_apparel", stock: { [WH]: 2, [BQ]: 1 } },
      ],
    },
    {
      handle: "pashmina-shawl", title: "Pashmina Shawl", status: "active", vendor: "Srinagar Shawl Emporium", hsnCode: "62142010",
      description: "Hand-spun Changthangi pashmina, hand-woven in Kashmir. 100 × 200 cm.",
      variants: [
        { title: "Ivory", sku: "SHAWL-PSH-IVORY", priceMinor: 890000, taxClass: "gst_apparel", preorder: true, stock: { [WH]: 0, [BQ]: 0 } },
        { title: "Charcoal", sku: "SHAWL-PSH-CHARCOAL", priceMinor: 890000, taxClass: "gst_apparel", stock: { [WH]: 3, [BQ]: 1 } },
      ],
    },
    {
      handle: "bandhani-cotton-dupatta", title: "Bandhani Cotton Dupatta", status: "active", vendor: "Kutch Crafts", hsnCode: "6214",
      description: "Tie-dyed bandhani in fine cotton, 2.25 m, with tasselled ends.",
      variants: [
        { title: "Red", sku: "DUP-BDH-RED", priceMinor: 79900, taxClass: "gst_apparel", stock: { [WH]: 18, [BQ]: 4 } },
        { title: "Yellow", sku: "DUP-BDH-YELLOW", priceMinor: 79900, taxClass: "gst_apparel", stock: { [WH]: 0, [BQ]: 3 } },
      ],
    },
    {
      handle: "rayon-palazzo-pants", title: "Rayon Palazzo Pants", status: "active", hsnCode: "6204",
      description: "Flowing printed palazzos with an elasticated waist and side pockets.",
      variants: [
        { title: "S", sku: "PLZ-RAY-S", priceMinor: 89900, taxClass: "gst_apparel", stock: { [WH]: 10, [BQ]: 2 } },
        { title: "M", sku: "PLZ-RAY-M", priceMinor: 89900, taxClass: "gst_apparel", stock: { [WH]: 16, [BQ]: 3 } },
        { title: "L", sku: "PLZ-RAY-L", priceMinor: 89900, taxClass: "gst_apparel", stock: { [WH]: 8, [BQ]: 0 } },
      ],
    },
    {
      handle: "leather-mojari", title: "Leather Mojari", status: "active", vendor: "Jodhpur Footwear", hsnCode: "6403",
      description: "Hand-stitched camel-leather mojaris with thread embroidery and a cushioned sole.",
      variants: [
        { title: "UK 7", sku: "MOJ-LTH-7", priceMinor: 149900, taxClass: "gst_footwear", stock: { [WH]: 4, [BQ]: 1 } },
        { title: "UK 8", sku: "MOJ-LTH-8", priceMinor: 149900, taxClass: "gst_footwear", stock: { [WH]: 0, [BQ]: 2 } },
        { title: "UK 9", sku: "MOJ-LTH-9", priceMinor: 149900, taxClass: "gst_footwear", stock: { [WH]: 3, [BQ]: 1 } },
      ],
    },
    {
      handle: "kolhapuri-chappal", title: "Kolhapuri Chappal", status: "active", vendor: "Kolhapur Leather Works", hsnCode: "640399",
      description: "Vegetable-tanned leather chappals, handmade in Kolhapur. Softens with wear.",
      variants: [
        { title: "UK 7", sku: "KOL-CHP-7", priceMinor: 99900, taxClass: "gst_footwear", stock: { [WH]: 6, [BQ]: 2 } },
        { title: "UK 8", sku: "KOL-CHP-8", priceMinor: 99900, taxClass: "gst_footwear", stock: { [WH]: 5, [BQ]: 2 } },
      ],
    },
    {
      handle: "cotton-dhurrie-rug", title: "Cotton Dhurrie Rug", status: "active", vendor: "Panipat Weaves", hsnCode: "570239",
      description: "Flat-woven cotton dhurrie in indigo stripes. Reversible.",
      variants: [
        { title: "4 × 6 ft", sku: "RUG-DHR-4X6", priceMinor: 240000, taxClass: "gst_5", stock: { [WH]: 5, [BQ]: 1 } },
        { title: "5 × 8 ft", sku: "RUG-DHR-5X8", priceMinor: 390000, taxClass: "gst_5", stock: { [WH]: 0, [BQ]: 1 } },
      ],
    },
    {
      handle: "ajrakh-cushion-covers", title: "Ajrakh Cushion Covers (set of 2)", status: "active", vendor: "Kutch Crafts", hsnCode: "6304",
      description: "Natural-dye ajrakh print on cotton, 16 × 16 in, with a hidden zip.",
      variants: [
        { title: "Indigo", sku: "CUSH-AJK-INDIGO", priceMinor: 89900, taxClass: "gst_apparel", stock: { [WH]: 12, [BQ]: 4 } },
        { title: "Madder red", sku: "CUSH-AJK-MADDER", priceMinor: 89900, taxClass: "gst_apparel", stock: { [WH]: 9, [BQ]: 0 } },
      ],
    },
    {
      handle: "jaipuri-razai-quilt", title: "Jaipuri Razai Quilt", status: "active", vendor: "Sanganer Prints", hsnCode: "9404",
      description: "Featherlight hand-quilted razai with a cotton filling and block-printed cover.",
      variants: [
        { title: "Single", sku: "QLT-JPR-SINGLE", priceMinor: 229900, taxClass: "gst_apparel", stock: { [WH]: 6, [BQ]: 2 } },
        { title: "Double", sku: "QLT-JPR-DOUBLE", priceMinor: 329900, taxClass: "gst_apparel", stock: { [WH]: 4, [BQ]: 1 } },
      ],
    },
    {
      handle: "kantha-table-runner", title: "Kantha Table Runner", status: "active", hsnCode: "6304",
      description: "Layered vintage cotton with running-stitch kantha, 13 × 72 in.",
      variants: [{ title: "Default", sku: "RUN-KNT-72", priceMinor: 115000, taxClass: "gst_apparel", stock: { [WH]: 8, [BQ]: 2 } }],
    },
    {
      handle: "handloom-cotton-towel", title: "Handloom Cotton Towel", status: "active", vendor: "Kannur Handloom Society", hsnCode: "630260",
      description: "Quick-drying waffle-weave towels from Kannur's handloom co-operatives.",
      variants: [
        { title: "Bath", sku: "TWL-HLM-BATH", priceMinor: 59900, taxClass: "gst_apparel", stock: { [WH]: 25, [BQ]: 5 } },
        { title: "Hand", sku: "TWL-HLM-HAND", priceMinor: 29900, taxClass: "gst_apparel", stock: { [WH]: 0, [BQ]: 6 } },
      ],
    },
    {
      handle: "brass-diya-pair", title: "Brass Diya (pair)", status: "active", vendor: "Moradabad Metalcraft", hsnCode: "7419",
      description: "Solid cast-brass oil lamps with a lotus base. Polish with tamarind or lemon.",
      variants: [{ title: "Default", sku: "DIYA-BRS-PAIR", priceMinor: 74900, taxClass: "gst_18", stock: { [WH]: 30, [BQ]: 6 } }],
    },
    {
      handle: "copper-water-bottle", title: "Copper Water Bottle", status: "active", vendor: "Moradabad Metalcraft", hsnCode: "741810",
      description: "Seamless pure-copper bottle with a leak-proof cap.",
      variants: [
        { title: "750 ml", sku: "BTL-CPR-750", priceMinor: 109900, taxClass: "gst_18", stock: { [WH]: 15, [BQ]: 3 } },
        { title: "1 litre", sku: "BTL-CPR-1000", priceMinor: 129900, taxClass: "gst_18", stock: { [WH]: 0, [BQ]: 2 } },
      ],
    },
    {
      handle: "terracotta-planter", title: "Terracotta Planter", status: "active", vendor: "Khurja Potters", hsnCode: "6913",
      description: "Wheel-thrown terracotta with a drainage hole and saucer.",
      variants: [
        { title: "Small", sku: "PLT-TER-S", priceMinor: 44900, taxClass: "gst_5", stock: { [WH]: 20, [BQ]: 4 } },
        { title: "Medium", sku: "PLT-TER-M", priceMinor: 69900, taxClass: "gst_5", stock: { [WH]: 12, [BQ]: 2 } },
      ],
    },
    {
      handle: "madhubani-wall-art", title: "Madhubani Wall Art", status: "active", hsnCode: "9701",
      description: "Hand-painted Madhubani on handmade paper by artists from Mithila, framed in teak.",
      variants: [{ title: "A3 framed", sku: "ART-MDB-A3", priceMinor: 450000, taxClass: "gst_5", stock: { [WH]: 2, [BQ]: 1 } }],
    },
    {
      handle: "steel-thali-set", title: "Stainless Steel Thali Set", status: "active", hsnCode: "732393",
      description: "Thali, two katoris and a tumbler in food-grade stainless steel.",
      variants: [{ title: "4 pieces", sku: "THALI-SS-4PC", priceMinor: 119900, taxClass: "gst_5", stock: { [WH]: 0, [BQ]: 3 } }],
    },
    {
      handle: "jute-tote-bag", title: "Jute Tote Bag", status: "active", vendor: "Bengal Jute Works", hsnCode: "420222",
      description: "Laminated jute tote with cotton handles and an inner pocket.",
      variants: [{ title: "Default", sku: "BAG-JUT-TOTE", priceMinor: 39900, taxClass: "gst_18", stock: { [WH]: 40, [BQ]: 8 } }],
    },
    {
      handle: "anarkali-suit-set", title: "Anarkali Suit Set", status: "draft", vendor: "Awadh Chikan House", hsnCode: "6204",
      description: "Flared cotton-silk anarkali with churidar and dupatta. Photography pending.",
      variants: [
        { title: "M", sku: "SUIT-ANK-M", priceMinor: 349900, taxClass: "gst_apparel", stock: { [WH]: 0, [BQ]: 0 } },
        { title: "L", sku: "SUIT-ANK-L", priceMinor: 349900, taxClass: "gst_apparel", stock: { [WH]: 0, [BQ]: 0 } },
      ],
    },
    {
      handle: "silk-pocket-square", title: "Silk Pocket Square", status: "draft",
      description: "Hand-rolled edges, printed mashru silk.",
      variants: [{ title: "Default", sku: "PSQ-SLK", priceMinor: 49900, taxClass: "gst_apparel", stock: { [WH]: 10, [BQ]: 0 } }],
    },
    {
      handle: "kullu-wool-shawl", title: "Kullu Wool Shawl", status: "archived", vendor: "Kullu Weavers", hsnCode: "6214",
      description: "Last winter's geometric-border shawl; no longer stocked.",
      variants: [{ title: "Default", sku: "SHAWL-KUL", priceMinor: 220000, taxClass: "gst_apparel", stock: { [WH]: 0, [BQ]: 1 } }],
    },
  ],
  customers: [
    { email: "priya.sharma@example.in", firstName: "Priya", lastName: "Sharma", phone: "+919820010001", city: "Mumbai", acceptsMarketing: true },
    { email: "rahul.mehta@example.in", firstName: "Rahul", lastName: "Mehta", phone: "+919822010002", city: "Pune", acceptsMarketing: false },
    { email: "ananya.iyer@example.in", firstName: "Ananya", lastName: "Iyer", phone: "+919840010003", city: "Chennai", acceptsMarketing: true },
    { email: "vikram.singh@example.in", firstName: "Vikram", lastName: "Singh", phone: "+919829010004", city: "Jaipur", acceptsMarketing: false },
    { email: "kavya.reddy@example.in", firstName: "Kavya", lastName: "Reddy", phone: "+919849010005", city: "Hyderabad", acceptsMarketing: false },
    { email: "arjun.nair@example.in", firstName: "Arjun", lastName: "Nair", phone: "+919847010006", city: "Kochi", acceptsMarketing: true },
    { email: "meera.joshi@example.in", firstName: "Meera", lastName: "Joshi", phone: "+919825010007", city: "Ahmedabad", acceptsMarketing: false },
    { email: "rohan.das@example.in", firstName: "Rohan", lastName: "Das", phone: "+919830010008", city: "Kolkata", acceptsMarketing: false },
    { email: "sneha.kulkarni@example.in", firstName: "Sneha", lastName: "Kulkarni", phone: "+919821010009", city: "Mumbai", acceptsMarketing: true },
    { email: "farhan.qureshi@example.in", firstName: "Farhan", lastName: "Qureshi", phone: "+919839010010", city: "Lucknow", acceptsMarketing: false },
  ],
  discounts: [
    { code: "WELCOME10", kind: "percentage", value: 10 },
    { code: "FLAT200", kind: "fixed_amount", value: 20000, usageLimit: 500 },
  ],
  pages: [
    {
      handle: "about-us", title: "About us", status: "published",
      body: "Demo Store brings handwoven textiles and handmade homeware from India's craft clusters to your door. We buy directly from weavers' co-operatives and artisans, and pay them fairly and on time.",
    },
    {
      handle: "shipping-returns", title: "Shipping & returns", status: "draft",
      body: "We ship across India from our Mumbai warehouse within two working days. Unused items can be returned within 7 days of delivery; sarees with the blouse piece cut cannot be returned.",
    },
  ],
  collections: [
    {
      handle: "festive-edit", title: "Festive Edit", published: true,
      description: "Silk, brass and hand embroidery for Diwali and the wedding season.",
      products: ["banarasi-silk-saree", "chikankari-kurta", "pashmina-shawl", "nehru-jacket", "brass-diya-pair", "madhubani-wall-art"],
    },
    {
      handle: "home-living", title: "Home & Living", published: true,
      description: "Block prints, dhurries and quilts for every room.",
      products: ["block-print-bedsheet", "jaipuri-razai-quilt", "cotton-dhurrie-rug", "ajrakh-cushion-covers", "kantha-table-runner", "handloom-cotton-towel", "terracotta-planter", "copper-water-bottle"],
    },
  ],
  menu: [
    { label: "Festive Edit", collection: "festive-edit" },
    { label: "Home & Living", collection: "home-living" },
    { label: "All products", url: "/products" },
    { label: "About us", page: "about-us" },
  ],
};

// --------------------------------------------------------------------------------------------- other store

const DL = "delhi";

const OTHER: StoreSeed = {
  locations: [
    {
      key: DL, name: "Delhi Warehouse", sellsOnline: true, city: "New Delhi", state: "IN-DL",
      tax: { gstin: "07ABCDE1234F1Z2", legalName: "Other Crafts LLP", addressLine1: "Plot 12, Okhla Industrial Area Phase II", postalCode: "110020" },
    },
  ],
  products: [
    {
      handle: "phulkari-dupatta", title: "Phulkari Dupatta", status: "active", vendor: "Patiala Phulkari", hsnCode: "6214",
      description: "Silk-floss phulkari embroidery on cotton, from Patiala.",
      variants: [
        { title: "Mustard", sku: "OTH-PHK-MUSTARD", priceMinor: 179900, taxClass: "gst_apparel", stock: { [DL]: 8 } },
        { title: "Pink", sku: "OTH-PHK-PINK", priceMinor: 179900, taxClass: "gst_apparel", stock: { [DL]: 0 } },
      ],
    },
    {
      handle: "khadi-cotton-kurta", title: "Khadi Cotton Kurta", status: "active", vendor: "Khadi Collective", hsnCode: "6211",
      description: "Hand-spun, hand-woven khadi kurta with side pockets.",
      variants: [
        { title: "M", sku: "OTH-KHD-M", priceMinor: 149900, taxClass: "gst_apparel", stock: { [DL]: 12 } },
        { title: "L", sku: "OTH-KHD-L", priceMinor: 149900, taxClass: "gst_apparel", stock: { [DL]: 6 } },
      ],
    },
    {
      handle: "dhokra-brass-figurine", title: "Dhokra Brass Figurine", status: "active", vendor: "Bastar Dhokra Artisans", hsnCode: "741999",
      description: "Lost-wax cast brass figurine from Bastar, about 15 cm tall.",
      variants: [{ title: "Default", sku: "OTH-DHK-FIG", priceMinor: 259900, taxClass: "gst_18", stock: { [DL]: 4 } }],
    },
  ],
  customers: [
    { email: "aditi.kapoor@example.in", firstName: "Aditi", lastName: "Kapoor", phone: "+919810020001", city: "New Delhi", acceptsMarketing: true },
    { email: "manish.gupta@example.in", firstName: "Manish", lastName: "Gupta", phone: "+919811020002", city: "Gurugram", acceptsMarketing: false },
    { email: "harpreet.kaur@example.in", firstName: "Harpreet", lastName: "Kaur", phone: "+919814020003", city: "Chandigarh", acceptsMarketing: false },
  ],
  discounts: [],
  pages: [],
};

/** What each demo store gets, by slug (see DEMO_STORES in seed.ts). */
export const STORE_SEEDS: Record<"demo" | "other", StoreSeed> = { demo: DEMO, other: OTHER };

export interface SeedCounts {
  products: number;
  activeProducts: number;
  variants: number;
  locations: number;
  inventoryLevels: number;
  customers: number;
  discounts: number;
  pages: number;
}

/** Row counts the seed guarantees for a store (tests compare against these). */
export function seedCounts(data: StoreSeed): SeedCounts {
  const variants = data.products.reduce((n, p) => n + p.variants.length, 0);
  return {
    products: data.products.length,
    activeProducts: data.products.filter((p) => p.status === "active").length,
    variants,
    locations: data.locations.length,
    inventoryLevels: variants * data.locations.length,
    customers: data.customers.length,
    discounts: data.discounts.length,
    pages: data.pages.length,
  };
}
