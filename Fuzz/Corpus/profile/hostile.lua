getmetatable("").__index = nil
while true do end
