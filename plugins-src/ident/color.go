package main

import (
	"github.com/toolhost/toolhost/guest"
	"github.com/toolhost/toolhost/plugins-src/internal/bundled"
	"github.com/toolhost/toolhost/plugins-src/internal/colorconv"
)

// colorInput is the color service's parameters.
type colorInput struct {
	Operation string `json:"operation" doc:"convert: write the colour as hex, rgb(), hsl() and oklch()."`
	Color     string `json:"color" maxLength:"128" doc:"A CSS colour: #rgb, #rgba, #rrggbb or #rrggbbaa; rgb() or rgba(); hsl() or hsla(); oklch(). Space-separated with an optional / alpha, or comma-separated. Named colours are not read."`
}

// colorOutput is its result.
type colorOutput struct {
	Hex     string `json:"hex" doc:"#rrggbb, or #rrggbbaa when alpha is below 1; lower case."`
	RGB     string `json:"rgb" doc:"rgb(R G B) with channels 0-255 rounded, and / alpha when below 1."`
	HSL     string `json:"hsl" doc:"hsl(H S% L%), two decimals at most."`
	OKLCH   string `json:"oklch" doc:"oklch(L% C H): lightness, chroma (4 decimals), hue (2 decimals; 0 for a grey)."`
	InGamut bool   `json:"in_gamut" doc:"false when the colour (an oklch() input) is outside sRGB: hex, rgb and hsl are then clipped, and oklch is the colour as given."`
}

func computeColor(ctx *guest.Context, in colorInput) (colorOutput, error) {
	r, err := colorconv.Convert(in.Color)
	if err != nil {
		return colorOutput{}, bundled.ToolError(err, map[error]string{
			colorconv.ErrColor: "color is not a CSS colour this tool reads: #rgb, #rrggbb, #rrggbbaa, rgb(), hsl() or oklch()",
		})
	}
	return colorOutput{Hex: r.Hex, RGB: r.RGB, HSL: r.HSL, OKLCH: r.OKLCH, InGamut: r.InGamut}, nil
}
