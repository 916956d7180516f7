package conversion

import "github.com/go-json-experiment/json/jsontext"

// heldBlockBytes is the size of the blocks that held objects are copied
// into.
const heldBlockBytes = 1 << 20

// heldObjects are a review's objects, each its JSON text, held until they
// are converted: where they lie in a body read whole (inPlace), else copied
// into blocks of heldBlockBytes, one after another. A review held whole
// (its objects before its desiredAPIVersion) then takes its objects' bytes
// and no more: an allocation of each would round it up to its size class,
// by up to an eighth.
type heldObjects struct {
	values  []jsontext.Value
	bytes   int
	inPlace bool
	block   []byte // the last block, to its end
}

// add holds value, which the decoder may reuse once it reads on unless
// the body was read whole.
func (h *heldObjects) add(value jsontext.Value) {
	if !h.inPlace {
		if len(value) > cap(h.block)-len(h.block) {
			h.block = make([]byte, 0, max(heldBlockBytes, len(value)))
		}
		start := len(h.block)
		h.block = append(h.block, value...)
		value = h.block[start:len(h.block):len(h.block)]
	}
	h.values = append(h.values, value)
	h.bytes += len(value)
}

// take returns the objects held, and holds none from then on: each block
// is let go once the caller has let go of every object in it.
func (h *heldObjects) take() []jsontext.Value {
	values := h.values
	h.reset()
	return values
}

// reset drops the objects held.
func (h *heldObjects) reset() {
	h.values, h.bytes, h.block = nil, 0, nil
}
