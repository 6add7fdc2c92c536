// What the selection shaders of the detection layers share
// (detect_compact / detect_sort / detect_overlaps / detect_nms / detect_rows):
// each group's state, STATE_INTS ints, and its order, order_ints(count) ints
// (the sorted slots, then the sort's stack of ranges).

// The state's fields: the number of candidates selected so far, the sort's
// phase, stack height, range, scan positions and pivot (as bits), the next
// row NMS looks at (NMS_DONE once it is done) and how many it kept.
const int N = 0, PHASE = 1, TOP = 2, LO = 3, HI = 4, I = 5, J = 6, PIVOT = 7, ROW = 8, KEPT = 9;
const int STATE_INTS = 10;
const int NMS_DONE = 0x7fffffff;

// The sort's phases (detect_sort.comp).
const int POP = 0, RANGE = 1, SCAN_I = 2, SCAN_J = 3, SWAP = 4, SORTED = 5;

// A group's order holds `count` slots and a stack of at most count ranges' bounds.
int order_ints(int count) { return 3 * count + 2; }
