package dispatch

import (
	"encoding/json"
	"fmt"
	"math"
	"strconv"
	"strings"

	"github.com/apache/arrow-go/v18/arrow"
)

// chartColumns finds the x and y columns the options name.
func chartColumns(cols []column, o cellOptions) (int, int, error) {
	find := func(axis, name string) (int, error) {
		for i, c := range cols {
			if strings.EqualFold(c.name, name) {
				return i, nil
			}
		}
		names := make([]string, len(cols))
		for i, c := range cols {
			names[i] = c.name
		}
		return -1, fmt.Errorf("chart %s=%s: no such result column (columns: %s)", axis, name, strings.Join(names, ", "))
	}
	x, err := find("x", o.x)
	if err != nil {
		return 0, 0, err
	}
	y, err := find("y", o.y)
	return x, y, err
}

// chartSpec builds a Vega-Lite v5 spec with the rows inline. Values go in
// as JSON numbers only when they are finite numbers: NaN and Infinity have
// no JSON form, so they become null rather than breaking the message.
func chartSpec(cols []column, rows [][]cellValue, o cellOptions) (map[string]any, error) {
	x, y, err := chartColumns(cols, o)
	if err != nil {
		return nil, err
	}
	values := make([]map[string]json.RawMessage, len(rows))
	for r, row := range rows {
		values[r] = map[string]json.RawMessage{
			cols[x].name: jsonValue(row[x], cols[x].typ),
			cols[y].name: jsonValue(row[y], cols[y].typ),
		}
	}
	xType := "nominal"
	switch {
	case isTemporal(cols[x].typ):
		xType = "temporal"
	case isNumeric(cols[x].typ) && o.chart != "bar":
		xType = "quantitative"
	case isNumeric(cols[x].typ):
		xType = "ordinal"
	}
	yType := "nominal"
	if isNumeric(cols[y].typ) {
		yType = "quantitative"
	}
	xEnc := map[string]any{"field": cols[x].name, "type": xType}
	if xType == "nominal" || xType == "ordinal" {
		// Vega-Lite sorts a discrete axis by value; a null sort keeps the
		// rows in the result's order, so ORDER BY ... LIMIT 10 draws the
		// top ten in rank order.
		xEnc["sort"] = nil
	}
	return map[string]any{
		"$schema": "https://vega.github.io/schema/vega-lite/v5.json",
		"data":    map[string]any{"values": values},
		"mark":    map[string]any{"type": o.chart, "tooltip": true},
		"encoding": map[string]any{
			"x": xEnc,
			"y": map[string]any{"field": cols[y].name, "type": yType},
		},
		"width": 480,
	}, nil
}

func jsonValue(v cellValue, t arrow.DataType) json.RawMessage {
	if v.null {
		return json.RawMessage("null")
	}
	switch {
	case isNumeric(t):
		f, err := strconv.ParseFloat(v.s, 64)
		if err != nil || math.IsNaN(f) || math.IsInf(f, 0) || !json.Valid([]byte(v.s)) {
			return json.RawMessage("null")
		}
		return json.RawMessage(v.s)
	case t.ID() == arrow.BOOL:
		return json.RawMessage(strconv.FormatBool(strings.EqualFold(v.s, "true")))
	}
	b, _ := json.Marshal(v.s)
	return b
}
