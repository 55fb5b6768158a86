/// A profile that fetches and hands the bytes straight through: fetch output is encoded bytes.
func fetchOnly(_ parameters: String = "") -> String {
    #"profile "raw" { fetch { \#(parameters) } }"#
}
