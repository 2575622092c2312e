project_name: "shop"

constant: marts {
  value: "main_marts"
}
